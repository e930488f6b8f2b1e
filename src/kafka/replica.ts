// The replica: follows a mirror topic and applies its records through engine.commit({ decide,
// cursors, origin: 'replica' }), the same apply() as everywhere else; local writes are refused
// by the engine (readOnlyReason). The replica's log holds exactly the primary's records, so its
// sequence numbers are the primary's: holder.appliedSeq says which primary record comes next.
// Invariants: records are applied in sequence order with no gap (a gap stops following, loudly);
// a sequence already applied is skipped (the mirror may re-send after a failure); the topic
// offset reached is stored in log meta in the same batch as the records it delivered, so a
// restart resumes there (and, without it — a node rebuilt from a snapshot — from the beginning
// of the topic, skipping what the snapshot already holds).
import { randomUUID } from 'node:crypto';
import type { Admin, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { StartupError } from '../engine/bootstrap.js';
import type { Engine } from '../engine/engine.js';
import { decodeEvent } from '../events/codec.js';
import { errorText } from './client.js';
import { ConsumerLoop } from './consumer-loop.js';
import { MirrorAssembler, MirrorFormatError, type MirrorRecord } from './mirror-format.js';
import { RateMeter } from './rate-meter.js';
import { systemClock } from '../util/clock.js';
import { type ReplicaPosition, decodeConsumerPosition, encodeConsumerPosition } from '../storage/index.js';

const META_KEY = 'kafka-replica';
/** Records per engine.write: bounds one LevelDB batch and the time between heartbeats. */
const APPLY_RECORDS = 2_000;
const APPLY_BYTES = 16 * 1024 * 1024;
const LAG_REFRESH_MS = 2_000;

/** The stored position: `offset` is that of the last message of the last applied record. */
type Stored = ReplicaPosition;

export interface ReplicaStatus {
  topic: string;
  state: 'starting' | 'following' | 'failed' | 'stopped';
  appliedSeq: number;
  /** Highest primary sequence seen in the topic. */
  topicSeq: number;
  /** Next topic offset to read, the topic's end, and the difference. */
  nextOffset: string;
  highWatermark: string;
  lagMessages: number;
  appliedRecords: number;
  recordsPerSec: number;
  lastAppliedAt?: string;
  lastError?: string;
}

export class Replica {
  private next: bigint;
  private readonly assembler = new MirrorAssembler();
  private loop: ConsumerLoop | undefined;
  private admin: Admin | undefined;
  private lagTimer: NodeJS.Timeout | undefined;
  private state: ReplicaStatus['state'] = 'starting';
  private lastError: string | undefined;
  private gap = false;
  private highWatermark = -1n;
  private topicSeq = 0;
  private appliedRecords = 0;
  private lastAppliedAt: Date | undefined;
  private readonly rate = new RateMeter();

  private constructor(
    private readonly engine: Engine,
    private readonly kafka: Kafka,
    readonly topic: string,
    private readonly logger: Logger,
    private readonly onFatal: (err: Error) => void,
    stored: Stored | undefined,
  ) {
    this.next = stored === undefined ? 0n : BigInt(stored.offset) + 1n;
  }

  static async open(
    engine: Engine,
    kafka: Kafka,
    topic: string,
    logger: Logger,
    onFatal: (err: Error) => void,
  ): Promise<Replica> {
    const raw = await engine.cursors.get(META_KEY);
    const stored = raw === undefined ? undefined : decodeConsumerPosition(META_KEY, 'replica', raw);
    const log = logger.child({ mod: 'kafka-replica', topic });
    if (stored !== undefined && stored.topic !== topic) {
      throw new StartupError(
        `this data directory follows Kafka topic "${stored.topic}", not "${topic}": use a fresh data directory to follow another primary`,
      );
    }
    const replica = new Replica(engine, kafka, topic, log, onFatal, stored);
    return replica;
  }

  start(): void {
    if (this.loop !== undefined) return;
    this.logger.info({ appliedSeq: this.engine.appliedSeq, nextOffset: String(this.next) }, 'replica: following');
    this.loop = new ConsumerLoop({
      kafka: this.kafka,
      // Nothing is committed to Kafka, so a fresh group per run costs nothing and a restarted
      // replica never waits for its dead predecessor's session to expire.
      groupId: `bitledger-replica-${randomUUID()}`,
      topic: this.topic,
      logger: this.logger,
      onAssigned: (partitions, seek) => {
        this.assembler.reset();
        if (partitions.includes(0) && this.next > 0n) seek(0, String(this.next));
        if (this.state === 'starting') this.state = 'following';
      },
      eachBatch: (p) => this.eachBatch(p),
      onError: (msg) => {
        this.lastError = msg;
      },
    });
    this.loop.start();
    this.lagTimer = setInterval(() => void this.refreshLag(), LAG_REFRESH_MS);
    this.lagTimer.unref();
  }

  async stop(): Promise<void> {
    if (this.lagTimer !== undefined) clearInterval(this.lagTimer);
    await this.loop?.stop();
    await this.admin?.disconnect().catch(() => undefined);
    this.admin = undefined;
    if (this.state !== 'failed') this.state = 'stopped';
  }

  status(): ReplicaStatus {
    const lag = this.highWatermark >= 0n && this.highWatermark > this.next ? Number(this.highWatermark - this.next) : 0;
    return {
      topic: this.topic,
      state: this.state,
      appliedSeq: this.engine.appliedSeq,
      topicSeq: Math.max(this.topicSeq, this.engine.appliedSeq),
      nextOffset: String(this.next),
      highWatermark: String(this.highWatermark < 0n ? 0n : this.highWatermark),
      lagMessages: lag,
      appliedRecords: this.appliedRecords,
      recordsPerSec: this.rate.perSec,
      ...(this.lastAppliedAt !== undefined ? { lastAppliedAt: this.lastAppliedAt.toISOString() } : {}),
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }

  private async eachBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    if (batch.partition !== 0 || this.state === 'failed') return;
    this.highWatermark = BigInt(batch.highWatermark);
    let pending: MirrorRecord[] = [];
    let bytes = 0;
    try {
      for (const msg of batch.messages) {
        if (!isRunning() || isStale()) break;
        const offset = BigInt(msg.offset);
        if (offset < this.next) continue;
        const rec = this.assembler.push(msg);
        if (rec !== undefined) {
          this.topicSeq = Math.max(this.topicSeq, rec.seq);
          const expected = this.engine.appliedSeq + pending.length + 1;
          if (rec.seq >= expected) {
            if (rec.seq > expected) throw new GapError(expected, rec.seq, msg.offset);
            pending.push(rec);
            bytes += rec.payload.byteLength;
          }
        }
        if (pending.length >= APPLY_RECORDS || bytes >= APPLY_BYTES) {
          await this.apply(pending);
          pending = [];
          bytes = 0;
          resolveOffset(msg.offset);
          await heartbeat();
        }
      }
      if (pending.length > 0) await this.apply(pending);
      const last = batch.messages[batch.messages.length - 1];
      if (last !== undefined && isRunning() && !isStale()) resolveOffset(last.offset);
    } catch (err) {
      this.fail(err);
    }
  }

  /** Applies records (contiguous, next in sequence) and stores the position in the same batch. */
  private async apply(records: MirrorRecord[]): Promise<void> {
    if (records.length === 0) return;
    const last = records[records.length - 1];
    const stored: Stored = { kind: 'replica', topic: this.topic, offset: last.lastOffset, seq: last.seq };
    await this.engine.commit({
      decide: (_h, sink) => {
        for (const r of records) sink.emit(decodeEvent(r.type, r.payload));
      },
      cursors: [{ key: META_KEY, value: encodeConsumerPosition(stored) }],
      origin: 'replica',
    });
    if (this.engine.appliedSeq !== last.seq) {
      throw new Error(
        `replica log diverged from the primary: applied primary record ${last.seq} as local sequence ${this.engine.appliedSeq}`,
      );
    }
    this.next = BigInt(last.lastOffset) + 1n;
    this.appliedRecords += records.length;
    this.lastAppliedAt = new Date(systemClock.now());
    this.rate.add(records.length);
  }

  /** Set when the topic has a gap this replica cannot cross: it answers no queries then. */
  get cannotFollow(): string | undefined {
    return this.state === 'failed' && this.gap ? this.lastError : undefined;
  }

  private fail(err: unknown): void {
    this.gap = err instanceof GapError;
    this.state = 'failed';
    this.lastError = errorText(err);
    this.logger.error({ err: this.lastError }, 'replica: stopped following');
    // A record the primary applied fails here: the states differ, which only a restart
    // (replay) can sort out. Gaps and foreign messages leave the state intact: keep serving.
    if (!(err instanceof GapError) && !(err instanceof MirrorFormatError) && err instanceof Error) this.onFatal(err);
  }

  private async refreshLag(): Promise<void> {
    try {
      if (this.admin === undefined) {
        const admin = this.kafka.admin();
        await admin.connect();
        this.admin = admin;
      }
      const offsets = await this.admin.fetchTopicOffsets(this.topic);
      const p0 = offsets.find((o) => o.partition === 0);
      if (p0 !== undefined) this.highWatermark = BigInt(p0.high);
    } catch {
      // The broker is away: keep the last known end; the consumer reports the outage.
    }
  }
}

class GapError extends Error {
  override name = 'GapError';
  constructor(expected: number, found: number, offset: string) {
    super(
      `mirror topic jumps from sequence ${expected - 1} to ${found} (offset ${offset}): the primary's records ${expected}..${found - 1} ` +
        "(released before mirroring started, or deleted by the topic's retention). Seed this replica: restore a backup or snapshot of the " +
        `primary taken at sequence ≥ ${found - 1} into its data directory, or start it from an earlier offset, with an empty data directory on a topic that holds the whole history.`,
    );
  }
}
