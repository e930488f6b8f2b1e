// On a real broker: two transactions interleaved on one partition and aborted in the other
// order than they began, then one committed. A read-committed consumer made through
// src/kafka/kafkajs.ts sees the committed record only; kafkajs's own filter let the first
// aborted transaction's record through (which put a killed node's aborted ingest batch into the
// cluster's state, test/integration/cluster-ingest.test.ts).
import { randomUUID } from 'node:crypto';
import type { Producer } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { kafkajs } from '../../src/kafka/kafkajs.js';
import { kafkaBrokersForTest, type KafkaHandle } from '../helpers/kafka-broker.js';
import { until } from '../helpers/until.js';

let broker: KafkaHandle;
beforeAll(async () => {
  broker = await kafkaBrokersForTest();
});
afterAll(async () => {
  await broker?.release();
});

it('a consumer skips transactions aborted out of order', { timeout: 120_000 }, async () => {
  const { Kafka, logLevel } = kafkajs();
  const kafka = new Kafka({ brokers: broker.brokers, logLevel: logLevel.NOTHING });
  const topic = `aborted-${randomUUID()}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  const producers: Producer[] = [];
  const open = async (id: string): Promise<Producer> => {
    const p = kafka.producer({ idempotent: true, maxInFlightRequests: 1, transactionalId: `${topic}-${id}` });
    await p.connect();
    producers.push(p);
    return p;
  };
  const [a, b, c] = [await open('a'), await open('b'), await open('c')];
  const ta = await a.transaction();
  const tb = await b.transaction();
  await tb.send({ topic, messages: [{ value: 'b1' }] });
  await ta.send({ topic, messages: [{ value: 'a1' }] });
  await tb.send({ topic, messages: [{ value: 'b2' }] });
  await ta.abort();
  await tb.abort();
  const tc = await c.transaction();
  await tc.send({ topic, messages: [{ value: 'c1' }] });
  await tc.commit();

  const seen: string[] = [];
  const consumer = kafka.consumer({ groupId: `${topic}-g` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      seen.push(String(message.value));
    },
  });
  try {
    // One partition, delivered in offset order: once c1 (the last record) is seen, all was.
    await until(() => seen.includes('c1'), { timeoutMs: 60_000, what: 'the committed record' });
    expect(seen).toEqual(['c1']);
  } finally {
    await consumer.disconnect();
    for (const p of producers) await p.disconnect();
    await admin.disconnect();
  }
});
