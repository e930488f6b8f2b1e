// Ingest definitions as use cases: define, delete, start, stop, inspect. Definitions and the
// running/stopped flag live in the log (IngestDefined/IngestDeleted), so they survive restarts
// and snapshots; on startup every ingest that is not stopped resumes. Runners consume only on a
// writable node with Kafka configured (a replica receives the primary's ingest state but runs
// nothing).
import type { Kafka } from 'kafkajs';
import { lazyProducer } from './dead-letters.js';
import type { Logger } from 'pino';
import { badRequest, DomainError, notFound } from '../domain/errors.js';
import type { Engine } from '../engine/engine.js';
import type { ImportService } from '../service/import/import-service.js';
import {
  type IngestApi,
  type IngestStatus,
  decideDefine,
  decideDelete,
  decideRunning,
  ingestStatus,
  notRunning,
  storedPartitions,
} from './ingest-decide.js';
import { IngestRunner } from './ingest-runner.js';
import { parseIngestSpec, type IngestSpec } from './ingest-spec.js';
import type { ReadonlyIngestState } from '../state/readonly.js';

export type { IngestApi, IngestStatus } from './ingest-decide.js';

export class IngestManager implements IngestApi {
  private readonly runners = new Map<string, IngestRunner>();
  private readonly dlq: ReturnType<typeof lazyProducer> | undefined;
  private closed = false;

  constructor(
    private readonly engine: Engine,
    private readonly imports: ImportService,
    /** undefined: Kafka not configured, or this node is a replica. */
    private readonly kafka: Kafka | undefined,
    private readonly whyNotRunning: string,
    private readonly logger: Logger,
  ) {
    this.dlq = kafka === undefined ? undefined : lazyProducer(kafka);
  }

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
    await this.dlq?.close();
  }

  async define(name: string, body: unknown): Promise<IngestStatus> {
    const spec = parseIngestSpec(name, body);
    this.requireKafka();
    await this.engine.commit({ decide: (h, sink) => decideDefine(h, sink, name, spec) });
    this.runnerFor(name, JSON.stringify(spec)).start();
    return this.status(name);
  }

  async remove(name: string): Promise<void> {
    this.find(name);
    await this.runners.get(name)?.stop();
    this.runners.delete(name);
    await this.engine.commit({ decide: (h, sink) => decideDelete(h, sink, name) });
  }

  async setRunning(name: string, run: boolean): Promise<IngestStatus> {
    if (run) this.requireKafka();
    await this.engine.commit({ decide: (h, sink) => decideRunning(h, sink, name, run) });
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
    const why = this.kafka === undefined && !ingest.paused ? this.whyNotRunning : undefined;
    return ingestStatus(name, ingest, partitions, runner?.runStatus() ?? notRunning(why));
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
        () => this.dlq?.get() ?? Promise.reject(new Error('no Kafka')),
        name,
        JSON.parse(specJson) as IngestSpec,
        this.logger.child({ ingest: name }),
      );
      this.runners.set(name, r);
    }
    return r;
  }
}
