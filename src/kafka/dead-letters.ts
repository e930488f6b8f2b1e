// The dead-letter topic of an ingest (one node's or the cluster's): records that cannot be mapped
// or imported are sent there with headers naming why and where they came from, before the write
// that counts them and moves past them (at least once there; counted exactly once in the state).
import type { Kafka, KafkaMessage, Producer } from 'kafkajs';
import { ensureTopic } from './client.js';
import { DEFAULT_DEAD_LETTER_WARN_RATIO, type IngestSpec } from './ingest-spec.js';

/** A record to dead-letter: `index` ≥ 0 is its place in the message's JSON array (-1: the whole message). */
export interface DeadLetter {
  msg: KafkaMessage;
  reason: string;
  index: number;
}

// A chunk this small says little about the rate (one bad record of two is not a trend).
const MIN_RECORDS_FOR_RATE = 20;

function recordOf(value: Buffer | null, index: number): Buffer {
  const list = JSON.parse(value?.toString('utf8') ?? '[]') as unknown[];
  return Buffer.from(JSON.stringify(list[index]));
}

export class DeadLetterSender {
  private topicReady = false;

  constructor(
    private readonly kafka: Kafka,
    private readonly producer: () => Promise<Producer>,
    private readonly ingest: string,
    private readonly spec: IngestSpec,
  ) {}

  async send(partition: number, bad: readonly DeadLetter[]): Promise<void> {
    if (bad.length === 0) return;
    if (!this.topicReady) {
      // Created on first use, not at definition time: brokers may refuse auto-creation.
      await ensureTopic(this.kafka, this.spec.deadLetterTopic);
      this.topicReady = true;
    }
    const producer = await this.producer();
    await producer.send({
      topic: this.spec.deadLetterTopic,
      acks: -1,
      messages: bad.map(({ msg, reason, index }) => ({
        key: msg.key,
        // One record of a JSON array is sent alone; a whole message as it came.
        value: index < 0 ? msg.value : recordOf(msg.value, index),
        headers: {
          ...msg.headers,
          ...(index >= 0 ? { 'bl-record-index': String(index) } : {}),
          'bl-error': reason,
          'bl-ingest': this.ingest,
          'bl-source-topic': this.spec.topic,
          'bl-source-partition': String(partition),
          'bl-source-offset': msg.offset,
        },
      })),
    });
  }
}

/** The definition's dead-letter threshold when a chunk's dead-lettered share is above it (warn). */
export function deadLetterShareAbove(spec: IngestSpec, deadLettered: number, records: number): number | undefined {
  const ratio = spec.deadLetterWarnRatio ?? DEFAULT_DEAD_LETTER_WARN_RATIO;
  return records < MIN_RECORDS_FOR_RATE || deadLettered <= ratio * records ? undefined : ratio;
}

/** A shared dead-letter producer, connected on first use (a failed connect is tried again). */
export function lazyProducer(kafka: Kafka): { get(): Promise<Producer>; close(): Promise<void> } {
  let pending: Promise<Producer> | undefined;
  return {
    get() {
      pending ??= (async () => {
        const p = kafka.producer({ allowAutoTopicCreation: true });
        await p.connect();
        return p;
      })();
      const mine = pending;
      mine.catch(() => {
        if (pending === mine) pending = undefined;
      });
      return mine;
    },
    async close() {
      const p = pending;
      pending = undefined;
      if (p !== undefined) await (await p.catch(() => undefined))?.disconnect().catch(() => undefined);
    },
  };
}
