// One Kafka-fed ingest on one cluster node (docs/CLUSTER.md, "Kafka-fed ingest"). Every node that
// runs the ingest is a member of its consumer group, so the source topic's partitions are spread
// over them. A batch is mapped as on one node (kafka/ingest-mapper.ts), validated and split into
// import commands by shard as an HTTP import is (ClusterImportService), and committed in one Kafka
// transaction with its offsets and counts (an ingestOffsets meta command) and its source offsets
// (IngestTransactions). Where a partition resumes is the offset in the state, which every node
// has from NAME.meta: after taking a partition over, the node first opens the partition's
// transactional producer (ending what a killed node left open), then applies NAME.meta to its
// end, then reads the offset. Unmappable or refused records go to the dead-letter topic first.
import type { EachBatchPayload, Kafka, KafkaMessage, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { DomainError } from '../../domain/errors.js';
import type { Engine } from '../../engine/engine.js';
import { statusOf } from '../../http/errors.js';
import { ConsumerLoop } from '../../kafka/consumer-loop.js';
import { type DeadLetter, DeadLetterSender, deadLetterShareAbove } from '../../kafka/dead-letters.js';
import { ImportBuilder, resolveTargets } from '../../kafka/ingest-mapper.js';
import type { IngestRunStatus } from '../../kafka/ingest-runner.js';
import type { IngestSpec } from '../../kafka/ingest-spec.js';
import { RateMeter } from '../../kafka/rate-meter.js';
import type { LogCommand } from '../commands/command.js';
import type { ClusterWrites } from '../coordination/cluster-writes.js';
import type { ClusterImportService } from '../coordination/import-coordinator.js';
import { IngestTransactions } from './transactions.js';

export interface IngestRunnerParts {
  engine: Engine;
  /** The cluster's Kafka client: source topics live on the cluster's brokers. */
  kafka: Kafka;
  writes: ClusterWrites;
  imports: ClusterImportService;
  deadLetters: () => Promise<Producer>;
  /** Commands above this are cut into chunks (the cluster topics' limit). */
  chunkBytes?: number;
  logger: Logger;
}

/** What one member reports of its share of an ingest (GET /internal/cluster/ingest/{name}). */
export interface MemberIngestStatus extends IngestRunStatus {
  /** Source partitions this node consumes now. */
  partitions: number[];
  /** Their ends as last fetched. */
  highWatermarks: Record<string, string>;
}

type Imports = ReturnType<ImportBuilder['build']>;

/** The schema no longer fits the definition: stop, do not dead-letter good records. */
class SchemaGone extends Error {}

export class ClusterIngestRunner {
  private loop: ConsumerLoop | undefined;
  private state: IngestRunStatus['state'] = 'stopped';
  private lastError: string | undefined;
  private assigned: number[] = [];
  private seek: ((partition: number, offset: string) => void) | undefined;
  /** Per source partition: where this node resumes (the state's offset once NAME.meta is applied). */
  private readonly resume = new Map<number, Promise<bigint | undefined>>();
  private readonly highWatermarks = new Map<number, string>();
  private readonly stats = { imported: 0, deadLettered: 0, transientErrors: 0, deadLetterRateWarnings: 0 };
  private readonly rate = new RateMeter();
  private readonly txns: IngestTransactions;
  private readonly dead: DeadLetterSender;

  constructor(
    private readonly parts: IngestRunnerParts,
    readonly name: string,
    readonly spec: IngestSpec,
  ) {
    const cluster = parts.writes.view.name;
    this.txns = new IngestTransactions(parts.kafka, parts.writes, `${cluster}-ingest-${name}`, parts.chunkBytes);
    this.dead = new DeadLetterSender(parts.kafka, parts.deadLetters, name, spec);
  }

  start(): void {
    if (this.loop !== undefined) return;
    this.state = 'starting';
    this.lastError = undefined;
    this.loop = new ConsumerLoop({
      kafka: this.parts.kafka,
      groupId: this.spec.group,
      topic: this.spec.topic,
      logger: this.parts.logger,
      partitionsConsumedConcurrently: 4,
      onAssigned: (partitions, seek) => this.onAssigned(partitions, seek),
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
    await this.txns.close();
    this.resume.clear();
    this.assigned = [];
    if (this.state !== 'failed') this.state = 'stopped';
  }

  status(): MemberIngestStatus {
    return {
      state: this.state,
      recordsPerSec: this.rate.perSec,
      importedThisRun: this.stats.imported,
      deadLetteredThisRun: this.stats.deadLettered,
      deadLetterRateWarnings: this.stats.deadLetterRateWarnings,
      transientErrors: this.stats.transientErrors,
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
      partitions: [...this.assigned].sort((a, b) => a - b),
      highWatermarks: Object.fromEntries(this.highWatermarks),
    };
  }

  private onAssigned(partitions: number[], seek: (partition: number, offset: string) => void): void {
    this.seek = seek;
    for (const p of this.assigned) {
      if (partitions.includes(p)) continue;
      this.resume.delete(p);
      void this.txns.drop(p);
    }
    this.assigned = partitions;
    if (this.state === 'starting') this.state = 'running';
    this.parts.logger.info({ partitions }, 'cluster ingest: partitions assigned');
  }

  /** Where a newly taken partition resumes: fence, apply NAME.meta to its end, read the state. */
  private resumeAt(partition: number): Promise<bigint | undefined> {
    let r = this.resume.get(partition);
    if (r === undefined) {
      r = (async () => {
        await this.txns.open(partition);
        const view = this.parts.writes.view;
        await view.waitApplied('meta', 0, await view.metaEndOffset(), AbortSignal.timeout(30_000));
        const stored = this.parts.engine.peekApplied((h) =>
          h.ingests.get(this.name)?.offsets.get(this.spec.topic)?.get(partition),
        );
        return stored === undefined ? undefined : BigInt(stored);
      })();
      this.resume.set(partition, r);
      r.catch(() => this.resume.delete(partition));
    }
    return r;
  }

  private async eachBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { partition } = batch;
    this.highWatermarks.set(partition, batch.highWatermark);
    const from = await this.resumeAt(partition);
    const first = batch.messages[0];
    if (first === undefined || !isRunning() || isStale()) return;
    // The group's offset is ahead of the state's (it should never be): read from the state's.
    if (from !== undefined && BigInt(first.offset) > from) {
      this.seek?.(partition, String(from));
      return;
    }
    const msgs = from === undefined ? batch.messages : batch.messages.filter((m) => BigInt(m.offset) >= from);
    for (let i = 0; i < msgs.length; i += this.spec.batchMessages) {
      if (!isRunning() || isStale() || this.state === 'failed') return;
      const chunk = msgs.slice(i, i + this.spec.batchMessages);
      try {
        const next = await this.importChunk(partition, chunk);
        this.resume.set(partition, Promise.resolve(BigInt(next)));
      } catch (err) {
        if (err instanceof SchemaGone) {
          this.fail(err.message);
          return;
        }
        // Unresolved, the batch is fetched again and filtered by where this node resumes.
        this.resume.delete(partition);
        throw err;
      }
      resolveOffset(chunk[chunk.length - 1].offset);
      await heartbeat();
    }
    if (msgs.length === 0) resolveOffset(batch.messages[batch.messages.length - 1].offset);
  }

  /** One chunk: mapped, dead letters sent, then one transaction. Returns the next offset. */
  private async importChunk(partition: number, chunk: KafkaMessage[]): Promise<string> {
    const targets = this.parts.engine.peekApplied((h) => resolveTargets(this.spec, h));
    if (typeof targets === 'string') throw new SchemaGone(targets);
    const builder = new ImportBuilder(this.spec, targets);
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
    const { commands, refused } = await this.commandsOrRefusals(builder.build(), goodMsgs, (msg) => {
      const one = new ImportBuilder(this.spec, targets);
      one.add(msg.value, () => undefined);
      return one.build();
    });
    const refusedRecords = refused.reduce((a, r) => a + goodCounts[r.at], 0);
    const letters = refused.map((r): DeadLetter => ({ msg: goodMsgs[r.at], reason: r.reason, index: -1 }));
    await this.dead.send(partition, [...bad, ...letters]);
    const next = String(BigInt(chunk[chunk.length - 1].offset) + 1n);
    const { topic, group } = this.spec;
    const deadLettered = bad.length + refusedRecords;
    await this.txns.commit({ group, topic, partition, next }, commands, {
      kind: 'ingestOffsets',
      name: this.name,
      topic,
      partitions: [partition],
      offsets: [next],
      records: good - refusedRecords,
      deadLettered,
    });
    this.stats.imported += good - refusedRecords;
    this.stats.deadLettered += deadLettered;
    this.rate.add(good + bad.length);
    this.warnDeadLetters(partition, deadLettered, good + bad.length, bad[0]?.reason);
    return next;
  }

  /**
   * The chunk's commands; when the import refuses it, message by message, so only the offending
   * messages are dropped (and dead-lettered), as on one node.
   */
  private async commandsOrRefusals(
    whole: Imports,
    msgs: readonly KafkaMessage[],
    one: (msg: KafkaMessage) => Imports,
  ): Promise<{ commands: LogCommand[]; refused: { at: number; reason: string }[] }> {
    try {
      return { commands: await this.commandsOf(whole), refused: [] };
    } catch (err) {
      if (!refusal(err)) throw err;
      this.parts.logger.warn(
        { err: err.message },
        'cluster ingest: batch refused by the import; retrying message by message',
      );
    }
    const commands: LogCommand[] = [];
    const refused: { at: number; reason: string }[] = [];
    for (let at = 0; at < msgs.length; at++) {
      try {
        commands.push(...(await this.commandsOf(one(msgs[at]))));
      } catch (err) {
        if (!refusal(err)) throw err;
        refused.push({ at, reason: `import refused: ${err.message}` });
      }
    }
    return { commands, refused };
  }

  private async commandsOf({ bits, values }: Imports): Promise<LogCommand[]> {
    const out: LogCommand[] = [];
    for (const b of bits) out.push(...(await this.parts.imports.commandsForBits(b)));
    for (const v of values) out.push(...(await this.parts.imports.commandsForValues(v)));
    return out;
  }

  private warnDeadLetters(partition: number, deadLettered: number, records: number, example?: string): void {
    const ratio = deadLetterShareAbove(this.spec, deadLettered, records);
    if (ratio === undefined) return;
    this.stats.deadLetterRateWarnings++;
    this.parts.logger.warn(
      { partition, deadLettered, records, threshold: ratio, example, deadLetterTopic: this.spec.deadLetterTopic },
      `cluster ingest: ${deadLettered} of ${records} records dead-lettered, above the threshold of ${ratio * 100}%`,
    );
  }

  private fail(reason: string): void {
    this.state = 'failed';
    this.lastError = reason;
    this.parts.logger.error(
      { reason },
      'cluster ingest: stopped; fix the schema or redefine the ingest, then start it',
    );
    const loop = this.loop;
    this.loop = undefined;
    // Not awaited: we are inside the consumer's own batch handler.
    setImmediate(() => void loop?.stop());
  }
}

/** A request the import refuses (4xx): the records' fault, not the cluster's. */
function refusal(err: unknown): err is DomainError {
  return err instanceof DomainError && statusOf(err) < 500;
}
