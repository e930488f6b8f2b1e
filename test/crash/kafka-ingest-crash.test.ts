// Exactly-once Kafka-fed import under SIGKILL: a server process imports N known records from a
// real topic and is killed again and again while it does. Offsets are committed in the same log
// batch as the bits, so afterwards the index holds exactly the N records' effects: the ingest's
// exactly-once record counter says N, every column keeps the value and mutex row of its LAST
// record (re-applying an older record after a newer one would show), the set rows lose nothing
// (Counts), and the bad records are counted exactly once however often they were dead-lettered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaBrokersForTest, type KafkaHandle } from '../helpers/kafka-broker.js';
import { freePort, removeDir, spawnServer, tempDir, type ChildServer } from '../helpers/server.js';
import { consume, createTopic, http, ok, produce, uniqueTopic, waitFor } from '../integration/kafka-support.js';

const N = 40_000;
const COLUMNS = 10_000; // each column is written N / COLUMNS times, with growing values
const PARTITIONS = 2;
const KILLS = 4;
const BAD_EVERY = 2_000;

let kafka: KafkaHandle;
let current: ChildServer | undefined;
const dataDir = tempDir('bitledger-kafka-crash-');

beforeAll(async () => {
  kafka = await kafkaBrokersForTest();
});

afterAll(async () => {
  await current?.kill('SIGKILL');
  removeDir(dataDir);
  await kafka?.release();
});

interface Gauge {
  records: number;
  deadLettered: number;
  lag: number;
}

async function gauge(url: string): Promise<Gauge> {
  return (await ok(url, 'GET', '/ingest/crash')).json<Gauge>();
}

describe('SIGKILL during a Kafka-fed import', () => {
  it(`imports exactly ${N} records across ${KILLS} kills`, async () => {
    const topic = uniqueTopic('crash-ingest');
    await createTopic(kafka.brokers, topic, PARTITIONS);
    const port = await freePort();
    const args = ['--kafka-brokers', kafka.brokers.join(','), '--snapshot-every-events', '300'];
    current = await spawnServer(dataDir, port, args);
    const url = current.url;
    await ok(url, 'POST', '/index/c', {});
    await ok(url, 'POST', '/index/c/field/seen', {});
    await ok(url, 'POST', '/index/c/field/grp', { options: { type: 'mutex' } });
    await ok(url, 'POST', '/index/c/field/val', { options: { type: 'int', min: 0, max: N } });

    // Record i: column i % COLUMNS, set row floor(i / COLUMNS), mutex row i % 7, value i. A
    // column always goes to the same partition, so its records keep their order.
    const records: { partition: number; value: string }[] = [];
    let bad = 0;
    for (let i = 0; i < N; i++) {
      const col = i % COLUMNS;
      records.push({
        partition: col % PARTITIONS,
        value: JSON.stringify({ id: col, seen: Math.floor(i / COLUMNS), grp: i % 7, val: i }),
      });
      if (i % BAD_EVERY === 0) {
        records.push({ partition: col % PARTITIONS, value: JSON.stringify({ id: col, val: -1 }) });
        bad++;
      }
    }
    await produceOrdered(topic, records);
    await ok(url, 'POST', '/ingest/crash', {
      topic,
      index: 'c',
      column: { field: 'id' },
      batchMessages: 150,
      fields: [
        { name: 'seen', field: 'seen', mapping: 'value-to-row' },
        { name: 'grp', field: 'grp', mapping: 'value-to-row' },
        { name: 'val', field: 'val', mapping: 'int' },
      ],
    });

    const seenAtKill: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      const server = current;
      const before = (await gauge(server.url)).records;
      // Kill once the consumer is importing again (after the dead member's session expired).
      await waitFor('import progress', async () => (await gauge(server.url)).records > before, 30_000, 20);
      await new Promise((r) => setTimeout(r, Math.random() * 150));
      await server.kill('SIGKILL');
      current = await spawnServer(dataDir, port, args);
      seenAtKill.push((await gauge(current.url)).records);
    }
    // The kills landed mid-import, not after it.
    expect(seenAtKill.some((n) => n > 0 && n < N)).toBe(true);

    const final = current;
    await waitFor(
      'import complete',
      async () => {
        const g = await gauge(final.url);
        return g.records + g.deadLettered >= N + bad && g.lag === 0;
      },
      60_000,
      100,
    );
    expect(await gauge(final.url)).toMatchObject({ records: N, deadLettered: bad, lag: 0 });

    const q = async (pql: string): Promise<unknown[]> =>
      (await ok(final.url, 'POST', '/index/c/query', pql)).json<{ results: unknown[] }>().results;
    // Values and mutex rows are those of each column's last record: i = N - COLUMNS + col.
    const lastI = Array.from({ length: COLUMNS }, (_, col) => N - COLUMNS + col);
    expect(await q('Sum(field=val)')).toEqual([{ value: lastI.reduce((a, b) => a + b, 0), count: COLUMNS }]);
    const grpCounts = await q(Array.from({ length: 7 }, (_, r) => `Count(Row(grp=${r}))`).join(''));
    expect(grpCounts).toEqual(Array.from({ length: 7 }, (_, r) => lastI.filter((i) => i % 7 === r).length));
    const seenCounts = await q(Array.from({ length: N / COLUMNS }, (_, r) => `Count(Row(seen=${r}))`).join(''));
    expect(seenCounts).toEqual(Array.from({ length: N / COLUMNS }, () => COLUMNS));
    // Dead letters: at least once in the topic (a kill between send and commit re-sends).
    const dead = await consume(kafka.brokers, `${topic}.dlq`, bad);
    expect(dead.length).toBeGreaterThanOrEqual(bad);
    expect((await http(final.url, 'GET', '/status')).status).toBe(200);
  });
});

/** Produces records to their partitions in order. */
async function produceOrdered(topic: string, records: { partition: number; value: string }[]): Promise<void> {
  for (let p = 0; p < PARTITIONS; p++) {
    await produce(
      kafka.brokers,
      topic,
      records.filter((r) => r.partition === p).map((r) => r.value),
      1,
      p,
    );
  }
}
