// One running ingest: a consumer in the ingest's group reads the topic, maps records and imports
// them through ImportService.decide*, the same path as HTTP imports.
// Exactly-once into the index: the consumed offsets are emitted as KafkaOffsetsCommitted in the
// same engine.write as the bits they produced (one LevelDB batch), and consumption resumes from
// those offsets (a seek on every group join), never from Kafka's group offsets. Inside the write
// the stored offset is checked against the one the batch started from, so a batch that raced
// with another (a rebalance) commits nothing. Records that cannot be mapped are sent to the
// dead-letter topic before the write that counts them and moves past them (at least once there;
// counted exactly once), so a bad record never blocks its partition.
import type { EachBatchPayload, Kafka, KafkaMessage, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { DomainError } from '../domain/errors.js';
import type { Engine } from '../engine/engine.js';
import type { ImportService } from '../service/import/import-service.js';
import { ConsumerLoop } from './consumer-loop.js';
import { type DeadLetter, DeadLetterSender, deadLetterShareAbove } from './dead-letters.js';
import { ImportBuilder, resolveTargets } from './ingest-mapper.js';
import type { IngestSpec } from './ingest-spec.js';
import { RateMeter } from './rate-meter.js';
import type { ReadonlyHolder } from '../state/readonly.js';

export interface IngestPartitionStatus {
  partition: number;
  /** Next offset to import (from the state), the partition's end, and the difference. */
  offset: string;
  highWatermark: string;
  lag: number;
}

export interface IngestRunStatus {
  state: 'starting' | 'running' | 'stopped' | 'failed';
  recordsPerSec: number;
  /** Since this process started the ingest. */
  importedThisRun: number;
  deadLetteredThisRun: number;
  /** Chunks whose dead-lettered share passed the definition's deadLetterWarnRatio (each warned in the log). */
  deadLetterRateWarnings: number;
  transientErrors: number;
  lastError?: string;
}

type Imports = ReturnType<ImportBuilder['build']>;

/** The batch lost a race: another batch moved the stored offset, or the ingest was stopped. */
class Superseded extends Error {}
/** The schema no longer fits the definition: stop, do not dead-letter good records. */
class SchemaGone extends Error {}
/** ImportService refused a chunk (not the engine: a shutdown is no reason to drop records). */
class ImportRefused extends Error {}

export class IngestRunner {
  private loop: ConsumerLoop | undefined;
  private state: IngestRunStatus['state'] = 'stopped';
  private lastError: string | undefined;
  private readonly highWatermarks = new Map<number, bigint>();
  private readonly stats = { imported: 0, deadLettered: 0, transientErrors: 0, deadLetterRateWarnings: 0 };
  private readonly rate = new RateMeter();
  private readonly deadLetters: DeadLetterSender;

  constructor(
    private readonly engine: Engine,
    private readonly imports: ImportService,
    private readonly kafka: Kafka,
    deadLetterProducer: () => Promise<Producer>,
    readonly name: string,
    readonly spec: IngestSpec,
    private readonly logger: Logger,
  ) {
    this.deadLetters = new DeadLetterSender(kafka, deadLetterProducer, name, spec);
  }

  start(): void {
    if (this.loop !== undefined) return;
    this.state = 'starting';
    this.lastError = undefined;
    this.loop = new ConsumerLoop({
      kafka: this.kafka,
      groupId: this.spec.group,
      topic: this.spec.topic,
      logger: this.logger,
      partitionsConsumedConcurrently: 4,
      onAssigned: (partitions, seek) => {
        for (const p of partitions) {
          const next = this.engine.peekApplied((h) => this.storedOffset(h, p));
          if (next !== undefined) seek(p, next);
        }
        if (this.state === 'starting') this.state = 'running';
        this.logger.info({ partitions }, 'ingest: partitions assigned');
      },
      eachBatch: (p) => this.eachBatch(p),
      onError: (msg) => {
        this.stats.transientErrors++;
        this.lastError = msg;
      },
    });
    this.loop.start();
  }

  async stop(): Promise<void> {
    const loop = this.loop;
    this.loop = undefined;
    await loop?.stop();
    if (this.state !== 'failed') this.state = 'stopped';
  }

  runStatus(): IngestRunStatus {
    return {
      state: this.state,
      recordsPerSec: this.rate.perSec,
      importedThisRun: this.stats.imported,
      deadLetteredThisRun: this.stats.deadLettered,
      deadLetterRateWarnings: this.stats.deadLetterRateWarnings,
      transientErrors: this.stats.transientErrors,
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }

  partitions(holder: ReadonlyHolder, fresh: Map<number, bigint> | undefined): IngestPartitionStatus[] {
    const stored = holder.ingests.get(this.name)?.offsets.get(this.spec.topic) ?? new Map<number, string>();
    const ends = fresh ?? this.highWatermarks;
    const all = new Set<number>([...stored.keys(), ...ends.keys()]);
    return [...all]
      .sort((a, b) => a - b)
      .map((partition) => {
        const offset = BigInt(stored.get(partition) ?? '0');
        const hw = ends.get(partition) ?? offset;
        return {
          partition,
          offset: String(offset),
          highWatermark: String(hw),
          lag: hw > offset ? Number(hw - offset) : 0,
        };
      });
  }

  private storedOffset(holder: ReadonlyHolder, partition: number): string | undefined {
    return holder.ingests.get(this.name)?.offsets.get(this.spec.topic)?.get(partition);
  }

  private async eachBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { partition } = batch;
    this.highWatermarks.set(partition, BigInt(batch.highWatermark));
    const stored = this.engine.peekApplied((h) => this.storedOffset(h, partition));
    let from = stored === undefined ? -1n : BigInt(stored);
    const msgs = batch.messages.filter((m) => BigInt(m.offset) >= from);
    for (let i = 0; i < msgs.length; i += this.spec.batchMessages) {
      if (!isRunning() || isStale() || this.state === 'failed') return;
      const chunk = msgs.slice(i, i + this.spec.batchMessages);
      try {
        const next = await this.importChunk(
          partition,
          stored === undefined && i === 0 ? undefined : String(from),
          chunk,
        );
        from = BigInt(next);
      } catch (err) {
        // Unresolved, the batch is fetched again and filtered by the stored offset.
        if (err instanceof Superseded) return;
        if (err instanceof SchemaGone) {
          this.fail(err.message);
          return;
        }
        throw err; // kafkajs retries the batch, then restarts the consumer
      }
      resolveOffset(chunk[chunk.length - 1].offset);
      await heartbeat();
    }
    if (msgs.length === 0 && batch.messages.length > 0) resolveOffset(batch.messages[batch.messages.length - 1].offset);
  }

  /** Imports one chunk atomically with its offset; returns the new stored offset. */
  private async importChunk(partition: number, expected: string | undefined, chunk: KafkaMessage[]): Promise<string> {
    const targets = this.engine.peekApplied((h) => resolveTargets(this.spec, h));
    if (typeof targets === 'string') throw new SchemaGone(targets);
    const builder = new ImportBuilder(this.spec, targets);
    // Messages with at least one good record, and their record counts.
    const goodMsgs: KafkaMessage[] = [];
    const goodCounts: number[] = [];
    let good = 0;
    const bad: DeadLetter[] = [];
    for (const msg of chunk) {
      const n = builder.add(msg.value, (reason, index) => bad.push({ msg, reason, index }));
      if (n > 0) {
        goodMsgs.push(msg);
        goodCounts.push(n);
        good += n;
      }
    }
    await this.deadLetters.send(partition, bad);
    const next = String(BigInt(chunk[chunk.length - 1].offset) + 1n);
    let rejected: { index: number; reason: string }[] = [];
    try {
      await this.write(partition, expected, next, [builder.build()], null, good, bad.length);
    } catch (err) {
      if (!(err instanceof ImportRefused)) throw err;
      // The import refused something the mapping let through: retry message by message, so
      // only the offending messages are dropped (and dead-lettered after the fact).
      this.logger.warn(
        { err: err.message, partition },
        'ingest: batch refused by the import; retrying message by message',
      );
      const perMessage = goodMsgs.map((msg) => {
        const one = new ImportBuilder(this.spec, targets);
        one.add(msg.value, () => undefined);
        return one.build();
      });
      rejected = await this.write(partition, expected, next, perMessage, goodCounts, good, bad.length);
    }
    let refused = 0;
    if (rejected.length > 0) {
      refused = rejected.reduce((a, r) => a + goodCounts[r.index], 0);
      await this.deadLetters.send(
        partition,
        rejected.map((r) => ({ msg: goodMsgs[r.index], reason: `import refused: ${r.reason}`, index: -1 })),
      );
    }
    this.stats.imported += good - refused;
    this.stats.deadLettered += bad.length + refused;
    this.rate.add(good + bad.length);
    this.checkDeadLetterRate(partition, bad.length + refused, good + bad.length, bad[0]?.reason);
    return next;
  }

  /** Warns (and counts) when a chunk's dead-lettered share passes the definition's threshold. */
  private checkDeadLetterRate(
    partition: number,
    deadLettered: number,
    records: number,
    example: string | undefined,
  ): void {
    const ratio = deadLetterShareAbove(this.spec, deadLettered, records);
    if (ratio === undefined) return;
    this.stats.deadLetterRateWarnings++;
    this.logger.warn(
      { partition, deadLettered, records, threshold: ratio, example, deadLetterTopic: this.spec.deadLetterTopic },
      `ingest: ${deadLettered} of ${records} records dead-lettered, above the threshold of ${ratio * 100}%`,
    );
  }

  /**
   * One engine.write: the imports (one group for the whole chunk, or one per message, in which
   * case a refused message is skipped and reported) and the offsets they advance.
   */
  private async write(
    partition: number,
    expected: string | undefined,
    next: string,
    groups: Imports[],
    /** null: one group for the whole chunk; else one group per message, with its record count. */
    perMessage: number[] | null,
    good: number,
    deadLettered: number,
  ): Promise<{ index: number; reason: string }[]> {
    const rejected: { index: number; reason: string }[] = [];
    let refused = 0;
    await this.engine.commit({
      decide: (h, sink) => {
        const ingest = h.ingests.get(this.name);
        if (ingest === undefined || ingest.paused || this.loop === undefined) throw new Superseded('ingest stopped');
        if (this.storedOffset(h, partition) !== expected) throw new Superseded('offset moved');
        const fresh = resolveTargets(this.spec, h);
        if (typeof fresh === 'string') throw new SchemaGone(fresh);
        groups.forEach(({ bits, values }, index) => {
          try {
            for (const b of bits) this.imports.decideBits(h, sink, b);
            for (const v of values) this.imports.decideValues(h, sink, v);
          } catch (err) {
            if (!(err instanceof DomainError)) throw err;
            // A whole-chunk group fails as a whole (the caller retries message by message).
            if (perMessage === null) throw new ImportRefused(err.message);
            rejected.push({ index, reason: err.message });
            refused += perMessage[index];
          }
        });
        sink.emit({
          type: 'KafkaOffsetsCommitted',
          ingest: this.name,
          topic: this.spec.topic,
          partitions: [partition],
          offsets: [next],
          records: good - refused,
          deadLettered: deadLettered + refused,
        });
      },
    });
    return rejected;
  }

  private fail(reason: string): void {
    this.state = 'failed';
    this.lastError = reason;
    this.logger.error({ reason }, 'ingest: stopped; fix the schema or redefine the ingest, then start it again');
    const loop = this.loop;
    this.loop = undefined;
    // Not awaited: we are inside the consumer's own batch handler.
    setImmediate(() => void loop?.stop());
  }
}
