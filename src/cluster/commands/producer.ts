// Sends commands to the cluster's topics. A command that is one message to one partition goes
// through the idempotent producer (acks=all); anything larger — several partitions, or a command
// cut into chunks — is one Kafka transaction, so a read-committed reader sees all of it or none.
// A small pool of transactional producers lets several such writes run at once; each slot has
// its own transactionalId (`${cluster}-${node}-${slot}`), stable across restarts so that a
// restarted node fences its own unfinished transactions. A write Kafka did not acknowledge is
// never acknowledged to the client: every failure becomes a DomainError('unavailable').
import type { Kafka, Message, Producer, RecordMetadata } from 'kafkajs';
import { DomainError } from '../../domain/errors.js';
import type { Command } from './command.js';
import { commandMessages } from './command-codec.js';
import type { ClusterMessage } from '../types.js';

/** One command and where it goes. */
export interface Outgoing {
  topic: string;
  partition: number;
  command: Command;
}

/** Where a command landed: the offset of its last message. */
export interface Produced {
  topic: string;
  partition: number;
  offset: string;
  /**
   * A command sent as one message (no chunks, no transaction): that message as Kafka holds it at
   * `offset`, for a holder that produced it to apply from its own bytes (commands/feed.ts, own).
   */
  message?: ClusterMessage;
}

type Sender = Pick<Producer, 'sendBatch'>;

/**
 * Has kafkajs fetch the topics' metadata now: otherwise a producer's first write to a topic waits
 * for that round first (5-23 ms on each node's first import in the cluster bench, its answer
 * parsed by code not yet compiled). A batch with no messages does it: kafkajs adds its topics to
 * the ones it knows, refreshes their metadata, and sends no produce request (no partition has a
 * message). A failure here is left to that first write, which fetches the metadata again.
 */
async function knowTopics(p: Producer, topics: readonly string[]): Promise<void> {
  if (topics.length === 0) return;
  await p
    .sendBatch({ acks: -1, topicMessages: topics.map((topic) => ({ topic, messages: [] })) })
    .catch(() => undefined);
}

/** How long a write that comes before the producer has connected waits for it. */
const START_WAIT_MS = 10_000;

export interface ProducerOptions {
  /** Transactional producers (writes that span partitions at once). */
  transactionSlots?: number;
  /** Chunk size of large commands (tests make it small). */
  chunkBytes?: number;
  /** The topics it writes: their metadata is fetched as it starts (start()). */
  topics?: readonly string[];
}

export class ClusterProducer {
  private idempotent: Producer | undefined;
  private readonly slots: (Producer | undefined)[];
  private readonly free: number[] = [];
  private readonly waiting: ((slot: number) => void)[] = [];
  private readonly chunkBytes: number | undefined;
  private readonly topics: readonly string[];
  /** Resolves once start() has connected: a write that comes just before waits for it. */
  private readonly started: Promise<Producer>;
  private markStarted: (p: Producer) => void = () => undefined;

  constructor(
    private readonly kafka: Kafka,
    /** Prefix of the transactional ids: unique per cluster and node. */
    private readonly txPrefix: string,
    opts: ProducerOptions = {},
  ) {
    const n = opts.transactionSlots ?? 4;
    this.slots = new Array<Producer | undefined>(n).fill(undefined);
    for (let i = 0; i < n; i++) this.free.push(i);
    this.chunkBytes = opts.chunkBytes;
    this.topics = opts.topics ?? [];
    this.started = new Promise((resolve) => {
      this.markStarted = resolve;
    });
  }

  async start(): Promise<void> {
    const p = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    await unavailable('connecting the producer', () => p.connect());
    await knowTopics(p, this.topics);
    this.idempotent = p;
    this.markStarted(p);
  }

  async stop(): Promise<void> {
    const all = [this.idempotent, ...this.slots].filter((p): p is Producer => p !== undefined);
    this.idempotent = undefined;
    this.slots.fill(undefined);
    await Promise.all(all.map((p) => p.disconnect().catch(() => undefined)));
  }

  /** Sends the commands (in order per partition); resolves once Kafka has all of them. */
  async send(items: readonly Outgoing[]): Promise<Produced[]> {
    const messages = items.map((it) => commandMessages(it.command, this.chunkBytes));
    if (items.length === 1 && messages[0].length === 1) {
      // A node answers requests from the end of its replay, a moment before its producer connects.
      const p = this.idempotent ?? (await this.startedWithin(START_WAIT_MS));
      const { topic, partition } = items[0];
      return unavailable('writing to Kafka', async () => {
        const m = messages[0][0];
        const res = await p.sendBatch({ acks: -1, topicMessages: [{ topic, messages: [{ ...m, partition }] }] });
        const offset = baseOffset(res, topic, partition);
        const value = Buffer.isBuffer(m.value) ? m.value : undefined;
        const stamp = m.timestamp === undefined ? {} : { timestamp: m.timestamp };
        return [{ topic, partition, offset, ...(value === undefined ? {} : { message: { offset, value, ...stamp } }) }];
      });
    }
    return this.transaction((tx) => produceRounds(tx, items, messages));
  }

  private async startedWithin(ms: number): Promise<Producer> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    });
    try {
      const p = await Promise.race([this.started, late]);
      if (p === undefined || this.idempotent === undefined)
        throw new DomainError('unavailable', 'cluster: this node is not connected to Kafka yet; try again');
      return p;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Runs `fn` in a transaction of a free slot: committed when fn resolves, aborted when it throws
   * (the error is passed on). The slot's producer is replaced after a failure it may not survive.
   */
  async transaction<T>(fn: (tx: Sender) => Promise<T>): Promise<T> {
    const slot = await this.takeSlot();
    try {
      const producer = await this.slotProducer(slot);
      const tx = await unavailable('starting a Kafka transaction', () => producer.transaction());
      let out: T;
      try {
        out = await fn(tx);
      } catch (err) {
        await tx.abort().catch(() => this.dropSlot(slot));
        throw err instanceof DomainError ? err : toUnavailable('writing to Kafka', err);
      }
      await unavailable('committing the Kafka transaction', () => tx.commit()).catch(async (err: unknown) => {
        await tx.abort().catch(() => undefined);
        await this.dropSlot(slot);
        throw err;
      });
      return out;
    } finally {
      this.releaseSlot(slot);
    }
  }

  private async slotProducer(slot: number): Promise<Producer> {
    const have = this.slots[slot];
    if (have !== undefined) return have;
    const p = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      transactionalId: `${this.txPrefix}-${slot}`,
      allowAutoTopicCreation: false,
    });
    await unavailable('connecting a transactional producer', () => p.connect());
    this.slots[slot] = p;
    return p;
  }

  private async dropSlot(slot: number): Promise<void> {
    const p = this.slots[slot];
    this.slots[slot] = undefined;
    await p?.disconnect().catch(() => undefined);
  }

  private takeSlot(): Promise<number> {
    const s = this.free.pop();
    if (s !== undefined) return Promise.resolve(s);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private releaseSlot(slot: number): void {
    const next = this.waiting.shift();
    if (next !== undefined) next(slot);
    else this.free.push(slot);
  }
}

/**
 * Sends the messages in rounds: round r carries the r-th message of every partition's queue, so
 * no batch holds more than one chunk of one partition (Kafka's batch limit) and each message's
 * offset is its batch's base offset. Returns each command's last offset.
 */
export async function produceRounds(
  tx: Sender,
  items: readonly Outgoing[],
  messages: readonly Message[][] = items.map((it) => commandMessages(it.command)),
): Promise<Produced[]> {
  const queues = new Map<string, { topic: string; partition: number; msgs: { m: Message; item: number }[] }>();
  items.forEach((it, i) => {
    const k = `${it.topic}/${it.partition}`;
    let q = queues.get(k);
    if (q === undefined) queues.set(k, (q = { topic: it.topic, partition: it.partition, msgs: [] }));
    for (const m of messages[i]) q.msgs.push({ m, item: i });
  });
  const out: (Produced | undefined)[] = new Array<Produced | undefined>(items.length).fill(undefined);
  const rounds = Math.max(...[...queues.values()].map((q) => q.msgs.length));
  for (let r = 0; r < rounds; r++) {
    const byTopic = new Map<string, Message[]>();
    const sent: { topic: string; partition: number; item: number }[] = [];
    for (const q of queues.values()) {
      const e = q.msgs[r];
      if (e === undefined) continue;
      let list = byTopic.get(q.topic);
      if (list === undefined) byTopic.set(q.topic, (list = []));
      list.push({ ...e.m, partition: q.partition });
      sent.push({ topic: q.topic, partition: q.partition, item: e.item });
    }
    const res = await tx.sendBatch({
      acks: -1,
      topicMessages: [...byTopic].map(([topic, msgs]) => ({ topic, messages: msgs })),
    });
    for (const s of sent)
      out[s.item] = { topic: s.topic, partition: s.partition, offset: baseOffset(res, s.topic, s.partition) };
  }
  return out.map((p) => {
    if (p === undefined) throw new Error('produceRounds: a command was not sent');
    return p;
  });
}

function baseOffset(res: RecordMetadata[], topic: string, partition: number): string {
  const m = res.find((r) => r.topicName === topic && r.partition === partition);
  const off = m?.baseOffset ?? m?.offset;
  if (off === undefined)
    throw new DomainError('unavailable', `cluster: Kafka answered no offset for ${topic}/${partition}`);
  return off;
}

/** One sentence of ours: the client library's text goes to its own log (kafka/client.ts), not to clients. */
function toUnavailable(what: string, _err: unknown): DomainError {
  return new DomainError('unavailable', `cluster: ${what} failed, so the write was not acknowledged; try again`);
}

async function unavailable<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw toUnavailable(what, err);
  }
}
