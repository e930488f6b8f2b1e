// The write path of one cluster node, assembled for the composition root (src/app.ts): the
// applier that membership's consumer loop delivers to, the producer, the services the HTTP routes
// call instead of the local ones, and the result route. The engine must be opened with
// CLUSTER_LOCAL_WRITE_REASON as its readOnlyReason, so that a route not routed through the
// cluster is refused instead of writing to this node alone.
import type { FastifyInstance } from 'fastify';
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { Engine } from '../../engine/engine.js';
import { ImportService } from '../../service/import/import-service.js';
import { PrepareThread } from '../commands/import-prepare-thread.js';
import type { LegacyRelease } from '../../service/legacy/legacy-release.js';
import { SchemaService } from '../../service/schema-service.js';
import { CommandApplier } from '../commands/applier.js';
import { ClusterWrites } from './cluster-writes.js';
import type { AckHold } from '../reads/cluster-ends.js';
import { WriteStages } from '../commands/write-stages.js';
import { ClusterImportService } from './import-coordinator.js';
import { ClusterKeyService } from './key-coordinator.js';
import { readYourWritesHook } from './read-your-writes.js';
import { ClusterProducer } from '../commands/producer.js';
import { clusterResultRoute } from './result-route.js';
import { ClusterSchemaService } from './schema-coordinator.js';
import type { ClusterView, KafkaGate } from '../types.js';
import { type ClusterReads, ClusterQueryService } from './write-coordinator.js';

export interface WritePathParts {
  engine: Engine;
  kafka: Kafka;
  view: ClusterView;
  /** The read fan-out (QueryFanout.run). */
  reads: ClusterReads;
  logger: Logger;
  legacyRelease?: LegacyRelease;
  /** Commands above this are cut into chunks (the topics' max.message.bytes less headroom). */
  chunkBytes?: number;
  /** The broker watch (ClusterRuntime.broker). */
  gate?: KafkaGate;
  /** The acknowledgments' hold (default: every write held, reads/cluster-ends.ts AckHold). */
  hold?: AckHold;
  /** Sync the applier's commits per --fsync (ApplierOptions.syncCommits): the node mirrors its log. */
  syncCommits?: boolean;
}

export interface ClusterWritePath {
  /** The CommandSink for membership's consumer loop (meta and log). */
  applier: CommandApplier;
  producer: ClusterProducer;
  writes: ClusterWrites;
  /** For buildHttpApp's context in place of the local services. */
  services: {
    query: ClusterQueryService;
    schema: ClusterSchemaService;
    imports: ClusterImportService;
    keys: ClusterKeyService;
  };
  /** Registers GET /internal/cluster/result. */
  routes(app: FastifyInstance): void;
  /** The read-your-writes wait of schema-bound routes: a hook for every route of the app. */
  hooks(app: FastifyInstance): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function clusterWritePath(parts: WritePathParts): ClusterWritePath {
  const { engine, view } = parts;
  const stages = new WriteStages();
  const prepareThread = new PrepareThread();
  const applier = new CommandApplier(
    {
      engine,
      stages,
      schema: new SchemaService(engine),
      imports: new ImportService(engine),
      partitionOf: (index, shard) => view.partitionOf(index, shard),
      logger: parts.logger,
      prepareThread,
    },
    { waitMeta: (next, signal) => view.waitApplied('meta', 0, next, signal), syncCommits: parts.syncCommits === true },
  );
  const producer = new ClusterProducer(parts.kafka, `${view.name}-${view.self.id}`, {
    topics: [`${view.name}.meta`, `${view.name}.log`],
    ...(parts.chunkBytes !== undefined ? { chunkBytes: parts.chunkBytes } : {}),
  });
  const writes = new ClusterWrites({
    view,
    producer,
    applier,
    stages,
    ...(parts.gate !== undefined ? { gate: parts.gate } : {}),
    ...(parts.hold !== undefined ? { hold: parts.hold } : {}),
  });
  return {
    applier,
    producer,
    writes,
    services: {
      query: new ClusterQueryService(engine, writes, parts.reads, parts.legacyRelease ?? ''),
      schema: new ClusterSchemaService(engine, writes),
      imports: new ClusterImportService(engine, writes),
      keys: new ClusterKeyService(engine, writes),
    },
    routes: (app) =>
      clusterResultRoute(app, { results: applier.results, waitApplied: (t, p, n, s) => view.waitApplied(t, p, n, s) }),
    hooks: (app) => readYourWritesHook(app, writes),
    // Every partition's stored position is read before the consumers start (the node's start
    // awaits this first), not at each partition's first delivery: there, under load, the read
    // took 0.3-22 ms on the way to each partition's first import after a start.
    start: async () => {
      // Loads beside the rest of the start, so the first import finds it ready.
      prepareThread.start();
      await applier.load('meta', [0]);
      await applier.load(
        'log',
        Array.from({ length: view.partitions }, (_, p) => p),
      );
      await producer.start();
    },
    stop: async () => {
      await producer.stop();
      await prepareThread.close();
    },
  };
}
