// kafka: adapters between Apache Kafka and the engine (docs/ARCHITECTURE.md, "Engine ports"), all optional.
// - Mirror (--kafka-mirror-topic): committed log records → a topic, in sequence order, behind
//   the local ack; resumes after the last record Kafka acknowledged (the log is held until then).
// - Replica (--replica-of <topic>): applies a mirror topic through engine.commit (origin
//   'replica') — the same apply() — and refuses local writes; resumes where it stopped.
// - Ingest (POST /ingest/{name}): JSON records of user topics mapped to bits and imported through
//   ImportService in the same engine.commit as the offsets they advance (exactly-once into the
//   index); unmappable records go to a dead-letter topic.
// Invariants: nothing here mutates state except through engine.commit; Kafka's own group offsets
// are never trusted for a position — positions live in this node's log and state.
import type { Logger } from 'pino';
import { ConfigError } from '../config/config.js';
import { DomainError } from '../domain/errors.js';
import type { Engine } from '../engine/engine.js';
import type { ImportService } from '../service/import/import-service.js';
import { createKafka } from './client.js';
import type { IngestApi } from './ingest-decide.js';
import { IngestManager } from './ingest-manager.js';
import { Mirror } from './mirror.js';
import { Replica } from './replica.js';

export type { IngestApi, IngestStatus } from './ingest-decide.js';
export type { MirrorStatus } from './mirror.js';
export type { ReplicaStatus } from './replica.js';

/** What a replica answers to a local write (the engine's readOnlyReason). */
export function replicaReadOnlyReason(topic: string): string {
  return `this node is a read-only replica following Kafka topic "${topic}": send writes to the primary that mirrors to it`;
}

export interface KafkaConfig {
  brokers: string[];
  mirrorTopic: string;
  replicaOf: string;
  /** 'kafka': a write is answered only once Kafka acknowledged its records. */
  mirrorAck: 'local' | 'kafka';
  /** How long a write waits for the mirror under mirrorAck 'kafka' (then 503). */
  mirrorAckTimeoutMs?: number;
  /** Set in cluster mode: ingests would write to this node alone, so they are refused with it. */
  ingestsRefused?: string;
}

export class KafkaRuntime {
  private constructor(
    private ingestApi: IngestApi,
    readonly mirror: Mirror | undefined,
    readonly replica: Replica | undefined,
    private readonly engine: Engine,
    readonly mirrorAck: 'local' | 'kafka',
    readonly mirrorAckTimeoutMs = 10_000,
  ) {}

  /** Builds what the config asks for; start() begins the background work. */
  static async open(
    cfg: KafkaConfig,
    engine: Engine,
    imports: ImportService,
    node: string,
    logger: Logger,
    onFatal: (err: Error) => void,
  ): Promise<KafkaRuntime> {
    const log = logger.child({ mod: 'kafka' });
    if (cfg.brokers.length === 0) {
      if (cfg.mirrorTopic !== '' || cfg.replicaOf !== '')
        throw new ConfigError('kafka-mirror-topic and replica-of need kafka-brokers');
      return new KafkaRuntime(
        new IngestManager(
          engine,
          imports,
          undefined,
          'Kafka is not configured: start the server with --kafka-brokers',
          log,
        ),
        undefined,
        undefined,
        engine,
        'local',
      );
    }
    const kafka = await createKafka(cfg.brokers, `bitledger-${node}`, log);
    const mirror =
      cfg.mirrorTopic !== ''
        ? await Mirror.open(
            engine.committedLog,
            engine.cursors,
            (cursors) => engine.commit({ cursors, origin: 'server', lazy: true }),
            kafka,
            cfg.mirrorTopic,
            log,
          )
        : undefined;
    const replica = cfg.replicaOf !== '' ? await Replica.open(engine, kafka, cfg.replicaOf, log, onFatal) : undefined;
    const ingests =
      cfg.ingestsRefused !== undefined
        ? new IngestManager(engine, imports, undefined, cfg.ingestsRefused, log)
        : replica !== undefined
          ? new IngestManager(
              engine,
              imports,
              undefined,
              `this node is a read-only replica of Kafka topic "${cfg.replicaOf}": define and run ingests on the primary`,
              log,
            )
          : new IngestManager(engine, imports, kafka, '', log);
    return new KafkaRuntime(ingests, mirror, replica, engine, cfg.mirrorAck, cfg.mirrorAckTimeoutMs);
  }

  /** The node's ingests: one node's, or (cluster mode) the cluster's (useIngests). */
  get ingests(): IngestApi {
    return this.ingestApi;
  }

  /** Cluster mode: the /ingest routes, /status and /metrics answer from the cluster's ingests. */
  useIngests(api: IngestApi): void {
    this.ingestApi = api;
  }

  /** Calls `listener` with the last sequence of every commit that staged records (mirror ack). */
  onStaged(listener: (lastSeq: number) => void): void {
    this.engine.onStaged(listener);
  }

  start(): void {
    this.mirror?.start();
    this.replica?.start();
    this.ingests.startAll();
  }

  /**
   * For the opt-in synchronous mirror: resolves once Kafka holds the records up to `seq`, or
   * throws a 503 after mirrorAckTimeoutMs (the write is durable here and will still be mirrored).
   */
  async whenMirrored(seq: number): Promise<void> {
    if (this.mirror === undefined || this.mirrorAck !== 'kafka') return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>(
      (resolve) => (timer = setTimeout(() => resolve(true), this.mirrorAckTimeoutMs)),
    );
    const late = await Promise.race([this.mirror.whenAcked(seq).then(() => false), timedOut]);
    clearTimeout(timer);
    if (late) {
      throw new DomainError(
        'unavailable',
        `the write is durable locally (sequence ${seq}) and will be mirrored to Kafka topic "${this.mirror.topic}" when the broker answers, but Kafka did not acknowledge it within ${this.mirrorAckTimeoutMs} ms (--kafka-mirror-ack-timeout)`,
      );
    }
  }

  statusExtras(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const gap = this.replica?.cannotFollow;
    // A replica that cannot follow serves nothing: /status says so instead of NORMAL.
    if (gap !== undefined) Object.assign(out, { state: 'DEGRADED', stateReason: `replica cannot follow: ${gap}` });
    if (this.mirror !== undefined) out.kafkaMirror = this.mirror.status();
    if (this.replica !== undefined) out.replica = this.replica.status();
    const names = this.ingests.list();
    if (names.length > 0) {
      out.ingests = names.map((n) => {
        const s = this.ingests.status(n);
        return {
          name: n,
          state: s.paused ? 'stopped' : s.run.state,
          records: s.records,
          deadLettered: s.deadLettered,
          lag: s.lag,
          recordsPerSec: s.run.recordsPerSec,
        };
      });
    }
    return out;
  }

  /** Stops everything that writes into the engine (ingests, the replica). */
  async stopConsumers(): Promise<void> {
    await this.ingests.closeAll();
    await this.replica?.stop();
  }

  /** Stops the consumers, then the mirror (after a moment to publish the tail). */
  async close(graceMs = 2_000): Promise<void> {
    await this.stopConsumers();
    const m = this.mirror;
    if (m === undefined) return;
    if (m.healthy) {
      // Publish the tail if Kafka answers; a broker that is away does not hold up the shutdown.
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([m.whenAcked(this.engine.committedLog.durableSeq), grace]);
      clearTimeout(timer);
    }
    await m.stop();
  }
}
