// Smoke test of the real Kafka broker the test suite runs against (docs/ARCHITECTURE.md, "Engine ports"): admin, producer
// with headers, consumer group. Uses the run's shared broker (globalSetup) or acquires its own.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel, type IHeaders, type KafkaMessage } from 'kafkajs';
import { kafkaBrokersForTest, type KafkaHandle } from '../helpers/kafka-broker.js';

function headerString(headers: IHeaders | undefined, key: string): string | undefined {
  const v = headers?.[key];
  if (v === undefined) return undefined;
  const one = Array.isArray(v) ? v[0] : v;
  return one === undefined ? undefined : one.toString();
}

describe('Kafka broker (real)', () => {
  let kafka: KafkaHandle;

  beforeAll(async () => {
    kafka = await kafkaBrokersForTest();
  });

  afterAll(async () => {
    await kafka?.release();
  });

  it('creates a topic, produces 3 messages with a header and consumes them back in order', async () => {
    const client = new Kafka({ clientId: 'bitledger-smoke', brokers: kafka.brokers, logLevel: logLevel.NOTHING });
    const topic = `smoke-${randomUUID()}`;

    const admin = client.admin();
    await admin.connect();
    try {
      const created = await admin.createTopics({
        topics: [{ topic, numPartitions: 1, replicationFactor: 1 }],
        waitForLeaders: true,
      });
      expect(created).toBe(true);
      expect(await admin.listTopics()).toContain(topic);
    } finally {
      await admin.disconnect();
    }

    const producer = client.producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      await producer.send({
        topic,
        acks: -1,
        messages: [1, 2, 3].map((seq) => ({
          key: 'k',
          value: JSON.stringify({ seq, bit: seq * 10 }),
          headers: { seq: String(seq) },
        })),
      });
    } finally {
      await producer.disconnect();
    }

    const consumer = client.consumer({ groupId: `smoke-group-${randomUUID()}` });
    const received: KafkaMessage[] = [];
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`got ${received.length}/3 messages in 30 s`)), 30_000);
        consumer
          .run({
            eachMessage: async ({ message }) => {
              received.push(message);
              if (received.length >= 3) {
                clearTimeout(timer);
                resolve();
              }
            },
          })
          .catch((err: unknown) => {
            clearTimeout(timer);
            reject(err instanceof Error ? err : new Error(String(err)));
          });
      });
    } finally {
      await consumer.disconnect();
    }

    expect(received).toHaveLength(3);
    expect(received.map((m) => JSON.parse(m.value?.toString() ?? 'null'))).toEqual([
      { seq: 1, bit: 10 },
      { seq: 2, bit: 20 },
      { seq: 3, bit: 30 },
    ]);
    expect(received.map((m) => headerString(m.headers, 'seq'))).toEqual(['1', '2', '3']);
    expect(received.map((m) => m.key?.toString())).toEqual(['k', 'k', 'k']);
    expect(received.map((m) => BigInt(m.offset))).toEqual([0n, 1n, 2n]);
  });
});
