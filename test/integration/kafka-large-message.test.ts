// On a real broker: messages large enough for the producer's rope (src/kafka/kafkajs-producer-
// speed.ts keeps buffers of ROPE_MIN_BYTES and more by reference instead of copying them into
// each encoder) go through kafkajs as loaded by src/kafka/kafkajs.ts, alone (the idempotent
// producer, as a one-message cluster command) and several in one transaction (as chunked ones),
// and come back byte for byte. The broker checks each batch's CRC and framing, so a rope that
// joined its pieces wrongly would be refused or read back different.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Producer } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { kafkajs } from '../../src/kafka/kafkajs.js';
import { ROPE_MIN_BYTES } from '../../src/kafka/kafkajs-producer-speed.js';
import { kafkaBrokersForTest, type KafkaHandle } from '../helpers/kafka-broker.js';
import { until } from '../helpers/until.js';

let broker: KafkaHandle;
beforeAll(async () => {
  broker = await kafkaBrokersForTest();
});
afterAll(async () => {
  await broker?.release();
});

it('large messages go through the broker and come back byte for byte', { timeout: 120_000 }, async () => {
  const { Kafka, logLevel } = kafkajs();
  const kafka = new Kafka({ brokers: broker.brokers, logLevel: logLevel.NOTHING });
  const topic = `large-${randomUUID()}`;
  const admin = kafka.admin();
  await admin.connect();
  const maxBytes = String(8 * 1024 * 1024);
  await admin.createTopics({
    topics: [
      {
        topic,
        numPartitions: 1,
        configEntries: [
          { name: 'max.message.bytes', value: maxBytes },
          { name: 'segment.bytes', value: String(4 * Number(maxBytes)) },
        ],
      },
    ],
    waitForLeaders: true,
  });
  const producers: Producer[] = [];
  const consumer = kafka.consumer({ groupId: `${topic}-g`, maxBytesPerPartition: 16 * 1024 * 1024 });
  try {
    const single = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    const tx = kafka.producer({ idempotent: true, maxInFlightRequests: 1, transactionalId: `${topic}-tx` });
    producers.push(single, tx);
    await single.connect();
    await tx.connect();
    const sizes = [ROPE_MIN_BYTES - 1, ROPE_MIN_BYTES, 1_100_000, 10, 3 * ROPE_MIN_BYTES + 5];
    const sent = sizes.map((n) => randomBytes(n));
    for (const value of sent.slice(0, 3))
      await single.sendBatch({ acks: -1, topicMessages: [{ topic, messages: [{ value, headers: { h: 'x' } }] }] });
    const t = await tx.transaction();
    await t.sendBatch({ acks: -1, topicMessages: [{ topic, messages: sent.slice(3).map((value) => ({ value })) }] });
    await t.commit();

    const seen: Buffer[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        if (message.value !== null) seen.push(Buffer.from(message.value));
      },
    });
    await until(() => seen.length >= sent.length, { timeoutMs: 60_000, what: 'every message back' });
    expect(seen.map((b) => b.length)).toEqual(sizes);
    for (const [i, b] of seen.entries()) expect(b.equals(sent[i]), `message ${i}`).toBe(true);
  } finally {
    await consumer.disconnect().catch(() => undefined);
    for (const p of producers) await p.disconnect().catch(() => undefined);
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  }
});
