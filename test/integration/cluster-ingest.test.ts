// Acceptance (issue 22, Kafka-fed ingest in cluster mode) on a real broker and two real node
// processes (R=2): an ingest defined at node 1 is defined cluster-wide and both nodes consume its
// source topic's partitions in one consumer group; batches are small, so node 1 is in the middle
// of its transactions when it is SIGKILLed while records keep arriving. Node 0 takes its
// partitions over, and every record is counted exactly once: the exactly-once totals (from the
// ingestOffsets commands every node applies) equal the records sent, the bits and the sum of the
// int values are all there, unmappable records are in the dead-letter topic, and the status at
// any node shows offsets, lag and each member's share. Stop, start and delete work at any node.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callOk, TestCluster } from '../helpers/cluster.js';
import { kafkaBrokersForTest, type KafkaHandle } from '../helpers/kafka-broker.js';
import { consume, createTopic, produce, uniqueTopic, waitFor } from './kafka-support.js';

const COLORS = ['red', 'green', 'blue'];
const PARTITIONS = 4;
/** Records per message: messages are JSON arrays. */
const PER_MESSAGE = 10;
const MESSAGES = 400;
const BAD = ['not json {', { id: 1, color: 'purple' }, { id: 2, nope: 1 }];

interface Gauge {
  records: number;
  deadLettered: number;
  lag: number;
  paused: boolean;
  partitions: { partition: number; offset: string; lag: number }[];
  run: { state: string; recordsPerSec: number };
  members: { id: string; state?: string; partitions?: number[]; importedThisRun?: number }[];
}

/** Messages `from`..`to` (exclusive): arrays of records with distinct columns. */
function messages(from: number, to: number): object[] {
  const out: object[] = [];
  for (let m = from; m < to; m++)
    out.push(
      Array.from({ length: PER_MESSAGE }, (_, k) => {
        const id = m * PER_MESSAGE + k + 10;
        return { id, color: COLORS[id % 3], amount: id };
      }),
    );
  return out;
}

describe('cluster: Kafka-fed ingest', () => {
  let kafka: KafkaHandle;
  let cluster: TestCluster | undefined;

  beforeAll(async () => {
    kafka = await kafkaBrokersForTest();
    cluster = await TestCluster.start({ brokers: kafka.brokers, nodes: 2, replicas: 2, partitions: 4 });
  });

  afterAll(async () => {
    await cluster?.stop();
    await kafka?.release();
  });

  it('counts every record exactly once through a SIGKILL of a consuming node', { timeout: 180_000 }, async () => {
    if (cluster === undefined) throw new Error('not started');
    const [n0, n1] = cluster.nodes;
    const topic = uniqueTopic('cl-ingest');
    const dlq = `${topic}.dlq`;
    await createTopic(kafka.brokers, topic, PARTITIONS);
    await callOk(n0.url, 'POST', '/index/ev', '{}');
    await callOk(n0.url, 'POST', '/index/ev/field/color', '{}');
    await callOk(n0.url, 'POST', '/index/ev/field/amount', '{"options":{"type":"int","min":0,"max":100000000}}');
    const definition = {
      topic,
      index: 'ev',
      column: { field: 'id' },
      fields: [
        { name: 'color', field: 'color', mapping: 'mapping', valueMap: { red: 1, green: 2, blue: 3 } },
        { name: 'amount', field: 'amount', mapping: 'int' },
      ],
      // Small batches: many transactions, so the kill lands inside one.
      batchMessages: 3,
    };
    // Defined at node 1, known at node 0 (the meta topic).
    await callOk(n1.url, 'POST', '/ingest/ing', JSON.stringify(definition));
    const gauge = async (url: string): Promise<Gauge> => JSON.parse(await callOk(url, 'GET', '/ingest/ing')) as Gauge;
    expect((await gauge(n0.url)).paused).toBe(false);

    const half = MESSAGES / 2;
    const member = async (id: string): Promise<Gauge['members'][number] | undefined> =>
      (await gauge(n0.url)).members.find((m) => m.id === id);
    // Both nodes hold partitions of the topic before anything is produced: produced earlier, the
    // first half could all be imported by node 0 while node 1 was still joining, and node 1 would
    // never import any of it (a fresh-clone CI run waited 60 s for that).
    await waitFor(
      'both members consuming',
      async () =>
        ((await member(n0.id))?.partitions?.length ?? 0) > 0 && ((await member(n1.id))?.partitions?.length ?? 0) > 0,
      60_000,
    );
    await produce(kafka.brokers, topic, [...messages(0, half), ...BAD], PARTITIONS);
    // Node 1 has imported some of the first half.
    await waitFor('node 1 importing', async () => ((await member(n1.id))?.importedThisRun ?? 0) > 0, 60_000);
    await cluster.signal(n1, 'SIGKILL');
    await produce(kafka.brokers, topic, messages(half, MESSAGES), PARTITIONS);

    const good = MESSAGES * PER_MESSAGE;
    await waitFor(
      'node 0 consumed the whole topic',
      async () => {
        const g = await gauge(n0.url);
        return g.lag === 0 && g.records + g.deadLettered >= good + BAD.length;
      },
      120_000,
      200,
    );
    const g = await gauge(n0.url);
    expect({ records: g.records, deadLettered: g.deadLettered }, cluster.outputs()).toEqual({
      records: good,
      deadLettered: BAD.length,
    });
    expect(g.partitions.map((p) => p.lag)).toEqual([0, 0, 0, 0]);
    const counts = JSON.parse(
      await callOk(n0.url, 'POST', '/index/ev/query', 'Count(Row(color=1)) Count(Row(color=2)) Count(Row(color=3))'),
    ) as { results: number[] };
    expect(counts.results.reduce((a, b) => a + b, 0)).toBe(good);
    const ids = Array.from({ length: good }, (_, i) => i + 10);
    const sum = JSON.parse(await callOk(n0.url, 'POST', '/index/ev/query', 'Sum(field=amount)')) as {
      results: { value: number; count: number }[];
    };
    expect(sum.results[0]).toEqual({ value: ids.reduce((a, b) => a + b, 0), count: good });
    // The dead letters, each with its reason.
    const letters = await consume(kafka.brokers, dlq, BAD.length);
    expect(letters.every((m) => m.headers?.['bl-error'] !== undefined)).toBe(true);

    // Stop and start at node 0; delete there too.
    expect(JSON.parse(await callOk(n0.url, 'POST', '/ingest/ing/stop')).paused).toBe(true);
    expect(JSON.parse(await callOk(n0.url, 'POST', '/ingest/ing/start')).paused).toBe(false);
    await callOk(n0.url, 'DELETE', '/ingest/ing');
    expect((await call(n0.url, 'GET', '/ingest/ing')).status).toBe(404);
  });
});
