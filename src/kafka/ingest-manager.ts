// Ingest definitions as use cases: define, delete, start, stop, inspect. Definitions and the
// running/stopped flag live in the log (IngestDefined/IngestDeleted), so they survive restarts
// and snapshots; on startup every ingest that is not stopped resumes. Runners consume only on a
// writable node with Kafka configured (a replica receives the primary's ingest state but runs
// nothing).
import type { Kafka, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { badRequest, conflict, DomainError, notFound } from '../domain/errors.js';
import type { Engine } from '../engine/engine.js';
import type { ImportService } from '../service/import/import-service.js';
import { IngestRunner, type IngestPartitionStatus, type IngestRunStatus } from './ingest-runner.js';
import { parseIngestSpec, validateAgainstSchema, type IngestSpec } from './ingest-spec.js';
import type { ReadonlyIngestState } from '../state/readonly.js';

export interface IngestStatus {
  name: string;
  definition: IngestSpec;
  /** As stored: stopped over HTTP, or meant to run. */
  paused: boolean;
  /** Totals over the ingest's whole life, counted exactly once (from the state). */
  records: number;
  deadLettered: number;
  partitions: IngestPartitionStatus[];
  lag: number;
  run: IngestRunStatus;
}

export class IngestManager {
  private readonly runners = new Map<string, IngestRunner>();
  private dlq: Promise<Producer> | undefined;
  private closed = false;

  constructor(
    private readonly engine: Engine,
    private readonly imports: ImportService,
    /** undefined: Kafka not configured, or this node is a replica. */
    private readonly kafka: Kafka | undefined,
    private readonly whyNotRunning: string,
    private readonly logger: Logger,
  ) {}

  /** Resumes every ingest that is not stopped. */
  startAll(): void {
    if (this.kafka === undefined) return;
    for (const [name, ingest] of this.engine.peekApplied((h) => h.ingests))
      if (!ingest.paused) this.runnerFor(name, ingest.spec).start();
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.runners.values()].map((r) => r.stop()));
    this.runners.clear();
    const dlq = this.dlq;
    this.dlq = undefined;
    if (dlq !== undefined) await (await dlq.catch(() => undefined))?.disconnect().catch(() => undefined);
  }

  async define(name: string, body: unknown): Promise<IngestStatus> {
    const spec = parseIngestSpec(name, body);
    this.requireKafka();
    await this.engine.commit({
      decide: (h, sink) => {
        if (h.ingests.has(name)) throw conflict(`ingest ${name} already exists`);
        validateAgainstSchema(spec, h);
        sink.emit({ type: 'IngestDefined', name, spec: JSON.stringify(spec), paused: false });
      },
    });
    this.runnerFor(name, JSON.stringify(spec)).start();
    return this.status(name);
  }

  async remove(name: string): Promise<void> {
    this.find(name);
    await this.runners.get(name)?.stop();
    this.runners.delete(name);
    await this.engine.commit({
      decide: (h, sink) => {
        if (!h.ingests.has(name)) throw notFound(`ingest ${name} not found`);
        sink.emit({ type: 'IngestDeleted', name });
      },
    });
  }

  async setRunning(name: string, run: boolean): Promise<IngestStatus> {
    if (run) this.requireKafka();
    await this.engine.commit({
      decide: (h, sink) => {
        const ingest = h.ingests.get(name);
        if (ingest === undefined) throw notFound(`ingest ${name} not found`);
        if (ingest.paused === !run) return;
        if (run) validateAgainstSchema(JSON.parse(ingest.spec) as IngestSpec, h);
        sink.emit({ type: 'IngestDefined', name, spec: ingest.spec, paused: !run });
      },
    });
    const spec = this.find(name).spec;
    if (run) {
      // A failed runner is replaced: starting again is how an operator retries after a fix.
      const old = this.runners.get(name);
      if (old !== undefined && old.runStatus().state === 'failed') {
        await old.stop();
        this.runners.delete(name);
      }
      this.runnerFor(name, spec).start();
    } else {
      await this.runners.get(name)?.stop();
    }
    return this.status(name);
  }

  list(): string[] {
    return this.engine.peekApplied((h) => [...h.ingests.keys()].sort());
  }

  /** Status with lag measured against the partitions' current ends (asks the broker). */
  async inspect(name: string): Promise<IngestStatus> {
    const { spec } = this.find(name);
    let ends: Map<number, bigint> | undefined;
    if (this.kafka !== undefined) {
      const admin = this.kafka.admin();
      try {
        await admin.connect();
        const offsets = await admin.fetchTopicOffsets((JSON.parse(spec) as IngestSpec).topic);
        ends = new Map(offsets.map((o) => [o.partition, BigInt(o.high)]));
      } catch {
        // Broker away: fall back to the last ends seen by the consumer.
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
    }
    return this.status(name, ends);
  }

  status(name: string, ends?: Map<number, bigint>): IngestStatus {
    const ingest = this.find(name);
    const definition = JSON.parse(ingest.spec) as IngestSpec;
    const runner = this.runners.get(name);
    const partitions =
      this.engine.peekApplied((h) => runner?.partitions(h, ends)) ??
      storedPartitions(ingest.offsets.get(definition.topic), ends);
    const run: IngestRunStatus = runner?.runStatus() ?? {
      state: 'stopped',
      recordsPerSec: 0,
      importedThisRun: 0,
      deadLetteredThisRun: 0,
      deadLetterRateWarnings: 0,
      transientErrors: 0,
      ...(this.kafka === undefined && !ingest.paused ? { lastError: this.whyNotRunning } : {}),
    };
    return {
      name,
      definition,
      paused: ingest.paused,
      records: ingest.records,
      deadLettered: ingest.deadLettered,
      partitions,
      lag: partitions.reduce((a, p) => a + p.lag, 0),
      run,
    };
  }

  private find(name: string): ReadonlyIngestState {
    const ingest = this.engine.peekApplied((h) => h.ingests.get(name));
    if (ingest === undefined) throw notFound(`ingest ${name} not found`);
    return ingest;
  }

  private requireKafka(): void {
    if (this.kafka === undefined)
      throw new DomainError(
        this.engine.readOnlyReason !== undefined ? 'method_not_allowed' : 'bad_request',
        this.whyNotRunning,
      );
  }

  private runnerFor(name: string, specJson: string): IngestRunner {
    let r = this.runners.get(name);
    if (r === undefined) {
      if (this.closed) throw new DomainError('unavailable', 'server is shutting down');
      if (this.kafka === undefined) throw badRequest(this.whyNotRunning);
      const kafka = this.kafka;
      r = new IngestRunner(
        this.engine,
        this.imports,
        kafka,
        () => this.deadLetterProducer(kafka),
        name,
        JSON.parse(specJson) as IngestSpec,
        this.logger.child({ ingest: name }),
      );
      this.runners.set(name, r);
    }
    return r;
  }

  private deadLetterProducer(kafka: Kafka): Promise<Producer> {
    this.dlq ??= (async () => {
      const p = kafka.producer({ allowAutoTopicCreation: true });
      await p.connect();
      return p;
    })();
    const pending = this.dlq;
    // A failed connect is not cached: the next dead letter tries again.
    pending.catch(() => {
      if (this.dlq === pending) this.dlq = undefined;
    });
    return pending;
  }
}

function storedPartitions(
  stored: ReadonlyMap<number, string> | undefined,
  ends: Map<number, bigint> | undefined,
): IngestPartitionStatus[] {
  const all = new Set<number>([...(stored?.keys() ?? []), ...(ends?.keys() ?? [])]);
  return [...all]
    .sort((a, b) => a - b)
    .map((partition) => {
      const offset = BigInt(stored?.get(partition) ?? '0');
      const hw = ends?.get(partition) ?? offset;
      return {
        partition,
        offset: String(offset),
        highWatermark: String(hw),
        lag: hw > offset ? Number(hw - offset) : 0,
      };
    });
}
