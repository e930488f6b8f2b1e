// A one-node stand-in for cluster mode's write path, on real parts: a real LevelDB engine opened
// as a cluster node (local writes refused), the real topics NAME.meta and NAME.log on the test
// broker, the real producer, and a plain kafkajs read-committed consumer in the test that hands
// each batch to the applier (membership's consumer loop is another helper's part). This node
// holds every partition, so its ClusterView is small: positions and waits are the applier's.
import { randomBytes } from 'node:crypto';
import { type Consumer, Kafka, logLevel } from 'kafkajs';
import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { CommandApplier } from '../../src/cluster/commands/applier.js';
import { ClusterWrites } from '../../src/cluster/coordination/cluster-writes.js';
import { CLUSTER_LOCAL_WRITE_REASON } from '../../src/cluster/commands/local-writes.js';
import { ClusterProducer } from '../../src/cluster/commands/producer.js';
import type { ClusterTopic, ClusterView } from '../../src/cluster/types.js';
import { bootstrap } from '../../src/engine/bootstrap.js';
import { Engine } from '../../src/engine/engine.js';
import { ensureTopic } from '../../src/kafka/client.js';
import { ImportService } from '../../src/service/import/import-service.js';
import { SchemaService } from '../../src/service/schema-service.js';
import { EventLog, SnapshotStore } from '../../src/storage/index.js';
import { kafkaBrokersForTest } from '../helpers/kafka-broker.js';
import { removeDir, tempDir } from '../helpers/temp.js';

export const silent = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

export const PARTITIONS = 4;

/** A set field's options as schema commands carry them (no cache: tests read rows directly). */
export const SET_FIELD = {
  type: 'set',
  cacheType: 'none',
  cacheSize: 0,
  keys: false,
  min: 0n,
  max: 0n,
  timeQuantum: '',
  noStandardView: false,
} as const;
/** A fixed shard → partition map for the tests (the real one is membership's partition.ts). */
export const partitionOf = (_index: string, shard: number): number => shard % PARTITIONS;

export function testKafka(brokers: string[]): Kafka {
  return new Kafka({ clientId: 'cluster-write-test', brokers, logLevel: logLevel.NOTHING });
}

/** A test file's broker client, and what its tests open and the directories they fill, closed and removed after them. */
export interface RealParts {
  kafka(): Kafka;
  open: { close(): Promise<void> }[];
  dirs: string[];
}

/** RealParts for the calling test file (registers its beforeAll and afterAll). */
export function realPartsForFile(): RealParts {
  let kafka: Kafka | undefined;
  const parts: RealParts = {
    kafka: () => {
      if (kafka === undefined) throw new Error('the test broker is not connected yet');
      return kafka;
    },
    open: [],
    dirs: [],
  };
  beforeAll(async () => {
    const { brokers } = await kafkaBrokersForTest();
    kafka = testKafka(brokers);
  }, 60_000);
  afterAll(async () => {
    for (const c of parts.open.reverse()) await c.close().catch(() => undefined);
    for (const d of parts.dirs) removeDir(d);
  });
  return parts;
}

export async function createClusterTopics(kafka: Kafka): Promise<string> {
  const name = `cw-${randomBytes(4).toString('hex')}`;
  await ensureTopic(kafka, `${name}.meta`, 1);
  await ensureTopic(kafka, `${name}.log`, PARTITIONS);
  return name;
}

export interface TestEngine {
  engine: Engine;
  close(): Promise<void>;
}

/** A real engine over `dir` (replaying what is there), opened as a cluster node. */
export async function openEngine(dir: string = tempDir(), clusterNode = true): Promise<TestEngine & { dir: string }> {
  const log = await EventLog.open(dir, { fsync: 'always', logger: silent });
  const snapshots = await SnapshotStore.open(dir, silent);
  const { holder } = await bootstrap(log, snapshots, silent);
  const engine = new Engine(
    holder,
    log,
    snapshots,
    {
      snapshotEveryEvents: Infinity,
      snapshotEveryBytes: Infinity,
      ...(clusterNode ? { readOnlyReason: CLUSTER_LOCAL_WRITE_REASON } : {}),
    },
    silent,
    (e) => {
      throw e;
    },
  );
  return {
    dir,
    engine,
    close: async () => {
      await engine.stop();
      await log.close();
    },
  };
}

export function newApplier(engine: Engine): CommandApplier {
  return new CommandApplier(
    { engine, schema: new SchemaService(engine), imports: new ImportService(engine), partitionOf, logger: silent },
    { metaWaitMs: 20_000 },
  );
}

/** Consumes NAME.meta and NAME.log (read committed) from the start into `applier`. */
export async function consumeInto(kafka: Kafka, name: string, applier: CommandApplier): Promise<Consumer> {
  const consumer = kafka.consumer({
    groupId: `${name}-${randomBytes(3).toString('hex')}`,
    readUncommitted: false,
    maxWaitTimeInMs: 100,
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [`${name}.meta`, `${name}.log`], fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    // Meta and log partitions progress independently: a log command may wait for meta.
    partitionsConsumedConcurrently: PARTITIONS + 1,
    eachBatch: async ({ batch }) => {
      const topic: ClusterTopic = batch.topic.endsWith('.meta') ? 'meta' : 'log';
      const next = (BigInt(batch.lastOffset()) + 1n).toString();
      await applier.deliver(topic, batch.partition, batch.messages, next);
    },
  });
  return consumer;
}

/** The view of a node that holds every partition: its positions are the applier's. */
export function soleView(name: string, applier: CommandApplier): ClusterView {
  const self = { id: 'n1', url: 'http://127.0.0.1:1' };
  return {
    name,
    self,
    partitions: PARTITIONS,
    replicas: 1,
    partitionOf,
    map: () => undefined,
    holders: () => [self],
    position: (topic, p) => applier.position(topic, p) ?? 0n,
    logEndOffsets: async () => new Map(),
    metaEndOffset: async () => '0',
    endsForRead: async () => ({ meta: '0', log: new Map() }),
    metaEndForWrite: async () => '0',
    waitApplied: (topic, p, next, signal) => applier.waitApplied(topic, p, next, signal),
    memberFetch: (url, init) => fetch(url, init),
    memberPost: async (url, body, signal) => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal });
      return { status: res.status, text: await res.text() };
    },
    isLive: () => true,
  };
}

export interface SoleNode {
  applier: CommandApplier;
  producer: ClusterProducer;
  writes: ClusterWrites;
  /** Resolves once every command this node produced is applied here. */
  caughtUp(): Promise<void>;
}

/** Producer + writes for one node; remembers what it produced so reads can wait for it. */
export async function soleNode(kafka: Kafka, name: string, applier: CommandApplier): Promise<SoleNode> {
  const producer = new ClusterProducer(kafka, `${name}-n1`, { transactionSlots: 2 });
  await producer.start();
  const produced = new Map<string, bigint>();
  const sender = {
    send: async (items: Parameters<ClusterProducer['send']>[0]) => {
      const out = await producer.send(items);
      for (const p of out) {
        const k = `${p.topic.endsWith('.meta') ? 'meta' : 'log'}/${p.partition}`;
        const next = BigInt(p.offset) + 1n;
        if ((produced.get(k) ?? 0n) < next) produced.set(k, next);
      }
      return out;
    },
  };
  const writes = new ClusterWrites({ view: soleView(name, applier), producer: sender, applier });
  return {
    applier,
    producer,
    writes,
    caughtUp: async () => {
      for (const [k, next] of produced) {
        const [topic, p] = k.split('/');
        await applier.waitApplied(topic as ClusterTopic, Number(p), next.toString(), AbortSignal.timeout(20_000));
      }
    },
  };
}
