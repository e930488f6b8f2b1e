// The mirror: publishes committed log records to a Kafka topic in sequence order, in batches,
// behind the local acknowledgement (a client never waits for Kafka unless asked to: whenAcked).
// Invariants: a record is sent only once it is durable locally; records are sent in sequence
// order by one idempotent producer with one request in flight, so retries never reorder; the
// acknowledged position only moves forward over records Kafka confirmed; the log keeps every
// record after the stored position (a retention hold), so an outage or a restart skips nothing.
// After a failure the producer is replaced and sending resumes after the last acknowledged
// record; a batch whose fate was unknown may then appear twice in the topic (readers drop
// sequences they already have).
import type { Kafka, Message, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import type { CommittedLog, CursorStore } from '../engine/ports.js';
import { Sleeper, backoffMs, ensureTopic, errorText } from './client.js';
import { MirrorCursor, type RideCursors } from './mirror-cursor.js';
import { UNLIMITED_RETENTION, finiteRetention } from './topic-retention.js';
import { recordMessages } from './mirror-format.js';
import { systemClock } from '../util/clock.js';

/**
 * One send stays well under Kafka's default 1 MiB record-batch limit; kafkajs groups a send's
 * messages in time quadratic in their number, so a send also stays at ~1000 messages.
 */
const SEND_BYTES = 512 * 1024;
const SEND_MESSAGES = 1_000;

export interface MirrorStatus {
  topic: string;
  state: 'starting' | 'running' | 'retrying' | 'stopped';
  /** Highest sequence Kafka acknowledged (this run), and the one stored durably. */
  ackedSeq: number;
  storedSeq: number;
  durableSeq: number;
  /** Records committed locally but not yet acknowledged by Kafka. */
  lagRecords: number;
  publishedRecords: number;
  publishedMessages: number;
  sends: number;
  failures: number;
  lastError?: string;
  lastAckAt?: string;
  /** Throughput of the last busy period. */
  recordsPerSec: number;
  /** Set when the topic existed with a finite retention (replicas started later may find a gap). */
  retentionWarning?: string;
}

export class Mirror {
  private acked: number;
  private producer: Producer | undefined;
  private topicReady = false;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private readonly sleeper = new Sleeper();
  private readonly waiters: { seq: number; resolve: () => void }[] = [];
  private readonly stats = { publishedRecords: 0, publishedMessages: 0, sends: 0, failures: 0, recordsPerSec: 0 };
  private state: MirrorStatus['state'] = 'starting';
  private lastError: string | undefined;
  private lastAckAt: Date | undefined;
  private retentionWarning: string | undefined;

  private constructor(
    private readonly log: CommittedLog,
    private readonly kafka: Kafka,
    readonly topic: string,
    private readonly logger: Logger,
    private readonly cursor: MirrorCursor,
  ) {
    this.acked = cursor.stored;
  }

  /** Loads the stored position and holds the log from there; call start() to begin sending. */
  static async open(
    log: CommittedLog,
    cursors: CursorStore,
    ride: RideCursors,
    kafka: Kafka,
    topic: string,
    logger: Logger,
  ): Promise<Mirror> {
    const cursor = await MirrorCursor.load(cursors, ride, topic);
    const mirror = new Mirror(log, kafka, topic, logger.child({ mod: 'kafka-mirror', topic }), cursor);
    log.hold(`kafka-mirror:${topic}`, () => cursor.stored + 1);
    log.onDurable(() => mirror.wake?.());
    return mirror;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Resolves once Kafka acknowledged every record up to `seq` (for the opt-in synchronous mode). */
  whenAcked(seq: number): Promise<void> {
    if (seq <= this.acked || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  status(): MirrorStatus {
    const durableSeq = this.log.durableSeq;
    return {
      topic: this.topic,
      state: this.state,
      ackedSeq: this.acked,
      storedSeq: this.cursor.stored,
      durableSeq,
      lagRecords: Math.max(0, durableSeq - this.acked),
      ...this.stats,
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
      ...(this.lastAckAt !== undefined ? { lastAckAt: this.lastAckAt.toISOString() } : {}),
      ...(this.retentionWarning !== undefined ? { retentionWarning: this.retentionWarning } : {}),
    };
  }

  /** True while sends succeed (a shutdown waits for the tail only then). */
  get healthy(): boolean {
    return this.state === 'running';
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.sleeper.interrupt();
    this.wake?.();
    // Disconnecting first cuts short a send that waits for an absent broker.
    await this.dropProducer();
    await this.loop;
    await this.dropProducer();
    for (const w of this.waiters.splice(0)) w.resolve();
    this.state = 'stopped';
  }

  private async run(): Promise<void> {
    let attempt = 0;
    while (!this.stopped) {
      const target = this.log.durableSeq;
      if (this.acked >= target) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          if (this.log.durableSeq > this.acked || this.stopped) resolve();
        });
        this.wake = undefined;
        continue;
      }
      try {
        await this.publishUpTo(target);
        if (this.state !== 'running') this.logger.info({ ackedSeq: this.acked }, 'mirror: publishing');
        this.state = 'running';
        attempt = 0;
      } catch (err) {
        if (this.stopped) break;
        this.stats.failures++;
        this.lastError = errorText(err);
        const delay = backoffMs(attempt++);
        // The first failure of an outage is worth a warning; the retries are not.
        if (this.state !== 'retrying')
          this.logger.warn(
            { err: this.lastError, ackedSeq: this.acked, retryInMs: delay },
            'mirror: Kafka send failed; retrying',
          );
        this.state = 'retrying';
        await this.dropProducer();
        await this.sleeper.sleep(delay);
      }
    }
  }

  private async publishUpTo(target: number): Promise<void> {
    const producer = await this.connect();
    let from = this.acked + 1;
    if (from < this.log.firstRetainedSeq) {
      // Only possible when the mirror is first enabled on a log that was already released.
      this.logger.error(
        { from, firstSeq: this.log.firstRetainedSeq },
        'mirror: records before the retained log were never mirrored; replicas must start from a snapshot of this node',
      );
      from = this.log.firstRetainedSeq;
      this.ack(from - 1);
    }
    const started = systemClock.monotonic();
    const startAcked = this.acked;
    let batch: Message[] = [];
    let bytes = 0;
    let lastSeq = this.acked;
    // One send in flight while the next batch is read and built; acknowledged in order.
    let inflight: { done: Promise<void>; completes: number } | undefined;
    const settle = async (): Promise<void> => {
      const f = inflight;
      inflight = undefined;
      if (f === undefined) return;
      await f.done;
      this.ack(f.completes);
    };
    /** Sends the batch; records up to `completes` are whole once it is acknowledged. */
    const flush = async (completes: number): Promise<void> => {
      await settle();
      if (batch.length === 0) return;
      const messages = batch;
      batch = [];
      bytes = 0;
      const done = producer.send({ topic: this.topic, acks: -1, messages }).then(() => {
        this.stats.sends++;
        this.stats.publishedMessages += messages.length;
      });
      done.catch(() => undefined); // observed by settle(); never an unhandled rejection
      inflight = { done, completes };
    };
    try {
      for await (const rec of this.log.readTimed(from, target)) {
        if (this.stopped) break;
        const msgs = recordMessages(rec);
        for (const m of msgs) {
          const size = (m.value as Buffer).byteLength;
          // A chunked record may span several sends: it counts only once its last chunk is sent.
          if (batch.length > 0 && (bytes + size > SEND_BYTES || batch.length >= SEND_MESSAGES)) await flush(lastSeq);
          batch.push({ ...m, partition: 0 });
          bytes += size;
        }
        lastSeq = rec.seq;
      }
      await flush(lastSeq);
      await settle();
    } finally {
      await inflight?.done.catch(() => undefined);
    }
    const secs = (systemClock.monotonic() - started) / 1000;
    if (secs > 0 && this.acked > startAcked) this.stats.recordsPerSec = Math.round((this.acked - startAcked) / secs);
  }

  private ack(seq: number): void {
    if (seq <= this.acked) return;
    this.stats.publishedRecords += seq - this.acked;
    this.acked = seq;
    this.lastAckAt = new Date(systemClock.now());
    this.cursor.advance(seq);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.waiters[i].seq <= seq) this.waiters.splice(i, 1)[0].resolve();
    }
  }

  private async connect(): Promise<Producer> {
    if (!this.topicReady) {
      if (!(await ensureTopic(this.kafka, this.topic, 1, UNLIMITED_RETENTION))) await this.checkRetention();
      this.topicReady = true;
    }
    if (this.producer === undefined) {
      // Few in-client retries: our loop retries forever, and reports an outage sooner this way.
      const producer = this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: true,
        retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
      });
      await producer.connect();
      this.producer = producer;
    }
    return this.producer;
  }

  private async checkRetention(): Promise<void> {
    const finite = await finiteRetention(this.kafka, this.topic);
    if (finite === undefined) return;
    this.retentionWarning = `mirror topic ${this.topic} has a finite retention (${finite}): once the broker deletes old records, a replica started from nothing cannot follow; set retention.ms=-1 and retention.bytes=-1 on the topic`;
    this.logger.warn({ retention: finite }, this.retentionWarning);
  }

  private async dropProducer(): Promise<void> {
    const p = this.producer;
    this.producer = undefined;
    if (p !== undefined) await p.disconnect().catch(() => undefined);
  }
}
