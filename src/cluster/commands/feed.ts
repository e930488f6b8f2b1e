// Hands fetched messages to the CommandSink in offset order, one partition at a time, and moves
// the node's position once the sink's write is durable. The position counts transaction
// markers: kafkajs drops control records from batch.messages, so the next offset is taken from
// batch.lastOffset() (which includes them) and, for a batch of markers only (for which kafkajs
// calls no eachBatch), from its END_BATCH_PROCESS event. Otherwise a reader would stop one short
// of the end offset after every committed transaction and a wait for it would never end.
import type { EachBatchPayload } from 'kafkajs';
import { type BatchControl, type LogBatch, STEADY } from '../log/log-port.js';
import type { Positions } from './positions.js';
import type { ClusterMessage, ClusterTopic, CommandSink } from '../types.js';

/** Messages per sink call: bounds one engine write and the time between heartbeats. */
const CHUNK = 1_000;

/**
 * The longest a fetched batch waits for this node's own sends to its partition (sending()): about
 * a produce; past it the consumer delivers, and an own apply that comes later finds it applied.
 */
const OWN_SEND_WAIT_MS = 1_000;

export class Feed {
  /** Per partition: the delivery in progress, so marker-only batches queue behind it. */
  private readonly chains = new Map<number, Promise<void>>();
  /** Per partition: this node's own sends under way (sending()), each settled once its own apply was tried. */
  private readonly ownSends = new Map<number, Set<Promise<void>>>();

  constructor(
    private readonly topic: ClusterTopic,
    private readonly sink: CommandSink,
    private readonly positions: Positions,
    /** Called after each position move (catch-up tracking). */
    private readonly onAdvanced: (partition: number) => void = () => undefined,
  ) {}

  /** A kafkajs batch (membership's consumer loop). */
  eachBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const b: LogBatch = { partition: batch.partition, messages: batch.messages, lastOffset: batch.lastOffset() };
    return this.deliverBatch(b, { resolveOffset, heartbeat, isRunning, isStale });
  }

  /** One fetched batch of a partition, from any log (log/log-port.ts). */
  async deliverBatch(batch: LogBatch, ctl: BatchControl = STEADY): Promise<void> {
    const { resolveOffset, heartbeat, isRunning, isStale } = ctl;
    const p = batch.partition;
    await this.ownSendsSettled(p);
    await this.serial(p, async () => {
      const from = this.positions.get(this.topic, p);
      const msgs = batch.messages.filter((m) => BigInt(m.offset) >= from);
      for (let i = 0; i < msgs.length; i += CHUNK) {
        if (!isRunning() || isStale()) return;
        const chunk = msgs.slice(i, i + CHUNK);
        const last = chunk[chunk.length - 1];
        // The last chunk carries the batch's end (markers after the last message included).
        const next = i + CHUNK >= msgs.length ? BigInt(batch.lastOffset) + 1n : BigInt(last.offset) + 1n;
        await this.deliver(p, chunk, next);
        resolveOffset(last.offset);
        await heartbeat();
      }
      if (msgs.length === 0 && isRunning() && !isStale()) {
        // Everything was below the position (a re-fetch after a seek): only the end may be new.
        const next = BigInt(batch.lastOffset) + 1n;
        if (next > from) await this.deliver(p, [], next);
        const last = batch.messages[batch.messages.length - 1];
        if (last !== undefined) resolveOffset(last.offset);
      }
    });
  }

  /** A fetched batch of transaction markers or aborted records only. */
  filtered(partition: number, lastOffset: string): void {
    const next = BigInt(lastOffset) + 1n;
    void this.serial(partition, async () => {
      if (next > this.positions.get(this.topic, partition)) await this.deliver(partition, [], next);
    }).catch(() => undefined); // a failed write stops the node through the engine's onFatal
  }

  /**
   * A command this node produced, applied from the bytes it sent instead of waiting for the
   * consumer to fetch them back: in the partition's order (queued behind any delivery under way),
   * and only when the position is the message's offset — everything before it applied, no
   * chunked command in assembly — so it is the delivery the consumer would have made. The
   * consumer then skips it (below the position). Answers whether it was applied here.
   */
  async own(partition: number, msg: ClusterMessage): Promise<boolean> {
    let applied = false;
    await this.serial(partition, async () => {
      const at = BigInt(msg.offset);
      if (this.positions.get(this.topic, partition) !== at) return;
      await this.deliver(partition, [msg], at + 1n);
      applied = true;
    });
    return applied;
  }

  /**
   * This node is about to send a command to the partition that it will apply from its own bytes
   * (own()); call the answer once that apply was tried (or the send failed). Meanwhile a fetched
   * batch of the partition waits (at most OWN_SEND_WAIT_MS) before it is delivered: the broker
   * may answer the consumer's fetch of the command before the producer's acknowledgment, and the
   * consumer would then apply it first, decoding again what own() has decoded and built already.
   */
  sending(partition: number): () => void {
    let settle = (): void => undefined;
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    let sends = this.ownSends.get(partition);
    if (sends === undefined) this.ownSends.set(partition, (sends = new Set()));
    sends.add(settled);
    return () => {
      sends.delete(settled);
      if (sends.size === 0 && this.ownSends.get(partition) === sends) this.ownSends.delete(partition);
      settle();
    };
  }

  /** Resolves once the own sends under way to the partition now have settled, or OWN_SEND_WAIT_MS passed. */
  private async ownSendsSettled(partition: number): Promise<void> {
    const sends = this.ownSends.get(partition);
    if (sends === undefined || sends.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, OWN_SEND_WAIT_MS);
    });
    try {
      await Promise.race([Promise.all([...sends]), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Runs `fn` in the partition's order, with no delivery beside it (a takeover's install), and
   * moves the position to what it returns.
   */
  async exclusive(partition: number, fn: () => Promise<bigint | undefined>): Promise<bigint | undefined> {
    let next: bigint | undefined;
    await this.serial(partition, async () => {
      next = await fn();
      if (next === undefined) return;
      this.positions.advance(this.topic, partition, next);
      this.onAdvanced(partition);
    });
    return next;
  }

  private async deliver(p: number, msgs: readonly ClusterMessage[], next: bigint): Promise<void> {
    await this.sink.deliver(
      this.topic,
      p,
      msgs.map((m) => ({
        offset: m.offset,
        value: m.value,
        ...(m.headers !== undefined ? { headers: m.headers } : {}),
        ...(m.timestamp !== undefined ? { timestamp: m.timestamp } : {}),
        ...(m.decodedBody !== undefined ? { decodedBody: m.decodedBody } : {}),
      })),
      String(next),
    );
    this.positions.advance(this.topic, p, next);
    this.onAdvanced(p);
  }

  private serial(p: number, fn: () => Promise<void>): Promise<void> {
    const run = (this.chains.get(p) ?? Promise.resolve()).then(fn, fn);
    this.chains.set(
      p,
      run.catch(() => undefined),
    );
    return run;
  }
}
