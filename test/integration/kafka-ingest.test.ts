// Kafka-fed import against the real broker: JSON records mapped by an ingest definition (the
// legacy input-definition rules) land in the index through the HTTP import path; records that
// cannot be mapped go to the dead-letter topic and are counted while the good records around them
// are imported; definitions are validated, stored, stopped, started, inspected and deleted over
// HTTP, and a restarted server resumes from the offsets in its own state without double counts.
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { consume, createTopic, http, ok, produce, uniqueTopic, waitFor, kafkaServerPool } from './kafka-support.js';

const pool = kafkaServerPool();
const servers = pool.servers;

async function start(dataDir?: string): Promise<TestServer> {
  return pool.start(dataDir !== undefined ? { dataDir } : {});
}

interface IngestGauge {
  records: number;
  deadLettered: number;
  lag: number;
  paused: boolean;
  partitions: { partition: number; offset: string; lag: number }[];
  run: { state: string; recordsPerSec: number; lastError?: string };
}

const COLORS = ['red', 'green', 'blue'];

function goodRecord(i: number): Record<string, unknown> {
  return {
    id: i * 3,
    color: COLORS[i % 3],
    size: i % 4,
    active: i % 5 === 0,
    amount: i,
    cat: 1,
    when: `2020-0${(i % 3) + 1}-15T10:00`,
    tag: `t${i % 2}`,
  };
}

const BAD: (string | Record<string, unknown>)[] = [
  'not json {',
  '"just a string"',
  { id: 1, nope: 1 },
  { id: 2, color: 'purple' },
  { id: 3, amount: 2_000_000 },
  { color: 'red' },
  { id: 4, active: 'yes' },
  { id: 5, when: 'yesterday', cat: 1 },
];

async function define(s: TestServer, name: string, topic: string, extra: Record<string, unknown> = {}): Promise<void> {
  await ok(s, 'POST', `/ingest/${name}`, {
    topic,
    index: 'ev',
    column: { field: 'id' },
    fields: [
      { name: 'color', field: 'color', mapping: 'mapping', valueMap: { red: 1, green: 2, blue: 3 } },
      { name: 'size', field: 'size', mapping: 'value-to-row' },
      { name: 'active', field: 'active', mapping: 'single-row-boolean', rowID: 7 },
      { name: 'amount', field: 'amount', mapping: 'int' },
      { name: 'cat', field: 'seen', mapping: 'value-to-row' },
      { name: 'when', field: 'seen', mapping: 'set-timestamp' },
      { name: 'tag', field: 'tag', mapping: 'value-to-row' },
    ],
    ...extra,
  });
}

async function schema(s: TestServer): Promise<void> {
  await ok(s, 'POST', '/index/ev', {});
  await ok(s, 'POST', '/index/ev/field/color', {});
  await ok(s, 'POST', '/index/ev/field/size', { options: { type: 'mutex' } });
  await ok(s, 'POST', '/index/ev/field/active', {});
  await ok(s, 'POST', '/index/ev/field/amount', { options: { type: 'int', min: 0, max: 1_000_000 } });
  await ok(s, 'POST', '/index/ev/field/seen', { options: { type: 'time', timeQuantum: 'YM' } });
  await ok(s, 'POST', '/index/ev/field/tag', { options: { keys: true } });
}

async function gauge(s: TestServer, name: string): Promise<IngestGauge> {
  return (await ok(s, 'GET', `/ingest/${name}`)).json<IngestGauge>();
}

async function count(s: TestServer, pql: string): Promise<number> {
  return (await ok(s, 'POST', '/index/ev/query', pql)).json<{ results: number[] }>().results[0];
}

/** What the index must say after good records 0..n-1 were imported. */
async function expectImported(s: TestServer, n: number): Promise<void> {
  const idx = Array.from({ length: n }, (_, i) => i);
  expect(await count(s, 'Count(Row(color=1))')).toBe(idx.filter((i) => i % 3 === 0).length);
  expect(await count(s, 'Count(Row(size=2))')).toBe(idx.filter((i) => i % 4 === 2).length);
  expect(await count(s, 'Count(Row(active=7))')).toBe(idx.filter((i) => i % 5 === 0).length);
  expect(await count(s, 'Count(Row(tag="t1"))')).toBe(idx.filter((i) => i % 2 === 1).length);
  expect(await count(s, 'Count(Row(seen=1, from=2020-02-01T00:00, to=2020-03-01T00:00))')).toBe(
    idx.filter((i) => i % 3 === 1).length,
  );
  const sum = (await ok(s, 'POST', '/index/ev/query', 'Sum(field=amount)')).json<{
    results: { value: number; count: number }[];
  }>().results[0];
  expect(sum).toEqual({ value: (n * (n - 1)) / 2, count: n });
}

describe('Kafka-fed import (real broker)', () => {
  it('imports good records, dead-letters and counts bad ones without blocking their partition', async () => {
    const topic = uniqueTopic('ingest');
    await createTopic(pool.brokers, topic, 3);
    const s = await start();
    await schema(s);
    await define(s, 'ev1', topic, { batchMessages: 700 });
    const N = 3000;
    const values: (string | object)[] = [];
    for (let i = 0; i < N; i++) {
      values.push(goodRecord(i));
      if (i % 400 === 0) values.push(BAD[(i / 400) % BAD.length]);
    }
    let bad = values.length - N;
    // A message may hold a JSON array of records: the bad one among them is dead-lettered alone.
    values.push([goodRecord(N), { id: 1, nope: 2 }, goodRecord(N + 1)]);
    bad++;
    await produce(pool.brokers, topic, values, 3);

    await waitFor('ingest caught up', async () => {
      const g = await gauge(s, 'ev1');
      return g.records + g.deadLettered === N + 2 + bad && g.lag === 0;
    });
    const g = await gauge(s, 'ev1');
    expect(g).toMatchObject({ records: N + 2, deadLettered: bad, lag: 0, paused: false, run: { state: 'running' } });
    expect(g.partitions.map((p) => p.partition)).toEqual([0, 1, 2]);
    await expectImported(s, N + 2);

    const dead = await consume(pool.brokers, `${topic}.dlq`, bad);
    expect(dead).toHaveLength(bad);
    for (const m of dead) {
      expect(m.headers?.['bl-error']?.toString()).toBeTruthy();
      expect(m.headers?.['bl-ingest']?.toString()).toBe('ev1');
      expect(m.headers?.['bl-source-topic']?.toString()).toBe(topic);
    }
    const reasons = dead.map((m) => m.headers?.['bl-error']?.toString() ?? '');
    expect(reasons.some((r) => r.startsWith('invalid JSON'))).toBe(true);
    expect(reasons.some((r) => r.includes('field not found: nope'))).toBe(true);
    expect(reasons.some((r) => r.includes('out of range'))).toBe(true);
    const fromArray = dead.find((m) => m.headers?.['bl-record-index'] !== undefined);
    expect(fromArray?.headers?.['bl-record-index']?.toString()).toBe('1');
    expect(JSON.parse(fromArray?.value?.toString() ?? 'null')).toEqual({ id: 1, nope: 2 });

    const st = (await ok(s, 'GET', '/status')).json<{ ingests: { name: string; records: number }[] }>();
    expect(st.ingests).toEqual([expect.objectContaining({ name: 'ev1', records: N + 2, deadLettered: bad })]);
    expect((await ok(s, 'GET', '/ingest')).json<{ ingests: unknown[] }>().ingests).toHaveLength(1);
  });

  it('maps string column and row keys, and int values, on a keyed index', async () => {
    const topic = uniqueTopic('ingest-keys');
    const s = await start();
    await ok(s, 'POST', '/index/users', { options: { keys: true } });
    await ok(s, 'POST', '/index/users/field/tags', { options: { keys: true } });
    await ok(s, 'POST', '/index/users/field/score', { options: { type: 'int', min: 0, max: 100 } });
    await ok(s, 'POST', '/index/users/field/vip', { options: { type: 'bool' } });
    await ok(s, 'POST', '/ingest/users', {
      topic,
      index: 'users',
      column: { key: 'user' },
      fields: [
        { name: 'tags', field: 'tags', mapping: 'value-to-row' },
        { name: 'score', field: 'score', mapping: 'int' },
        { name: 'vip', field: 'vip', mapping: 'mapping', valueMap: { yes: 1, no: 0 } },
      ],
    });
    await produce(pool.brokers, topic, [
      { user: 'ann', tags: ['a', 'b'], score: 10, vip: 'yes' },
      [
        { user: 'bob', tags: 'b', score: 20 },
        { user: 'cy', tags: [1], score: 5 },
      ],
      { user: 'dee', score: '30', vip: 'no' },
      { user: 7, score: 1 },
    ]);
    await waitFor('3 good, 2 bad', async () => {
      const g = await gauge(s, 'users');
      return g.records === 3 && g.deadLettered === 2;
    });
    const q = async (pql: string): Promise<unknown> =>
      (await ok(s, 'POST', '/index/users/query', pql)).json<{ results: unknown[] }>().results[0];
    expect(await q('Row(tags="b")')).toMatchObject({ keys: ['ann', 'bob'] });
    expect(await q('Sum(field=score)')).toEqual({ value: 60, count: 3 });
    expect(await q('Row(vip=true)')).toMatchObject({ keys: ['ann'] });
    expect(await q('Row(vip=false)')).toMatchObject({ keys: ['dee'] });
  });

  it('validates definitions, stops and starts, survives a restart exactly once, and deletes', async () => {
    const topic = uniqueTopic('ingest-life');
    await createTopic(pool.brokers, topic, 2);
    const s = await start();
    await schema(s);
    const base = { topic, index: 'ev', column: { field: 'id' } };
    const bad = async (body: unknown, status: number, text: RegExp): Promise<void> => {
      const r = await http(s, 'POST', '/ingest/x', body as object);
      expect({ status: r.status, text: text.test(r.body) ? 'ok' : r.body }).toEqual({ status, text: 'ok' });
    };
    await bad({ ...base, fields: [{ name: 'a', field: 'color', mapping: 'nope' }] }, 400, /invalid mapping/);
    await bad({ ...base, fields: [{ name: 'a', field: 'color', mapping: 'mapping' }] }, 400, /valueMap required/);
    await bad(
      { ...base, fields: [{ name: 'a', field: 'active', mapping: 'single-row-boolean' }] },
      400,
      /rowID required/,
    );
    await bad({ ...base, fields: [{ name: 'a', field: 'amount', mapping: 'value-to-row' }] }, 400, /int field/);
    await bad({ ...base, fields: [{ name: 'a', field: 'missing', mapping: 'int' }] }, 404, /field missing not found/);
    await bad(
      { ...base, index: 'nope', fields: [{ name: 'a', field: 'color', mapping: 'value-to-row' }] },
      404,
      /index nope not found/,
    );
    await bad(
      { ...base, column: { key: 'k' }, fields: [{ name: 'a', field: 'color', mapping: 'value-to-row' }] },
      400,
      /keys/,
    );
    await bad({ ...base, fields: [] }, 400, /fields/);

    await define(s, 'life', topic);
    expect(
      (
        await http(s, 'POST', '/ingest/life', {
          ...base,
          fields: [{ name: 'a', field: 'color', mapping: 'value-to-row' }],
        })
      ).status,
    ).toBe(409);
    const all = Array.from({ length: 1200 }, (_, i) => goodRecord(i));
    await produce(pool.brokers, topic, all.slice(0, 400), 2);
    await waitFor('first 400', async () => (await gauge(s, 'life')).records === 400);

    // Stopped: nothing is consumed, and the stop is stored (it survives a restart).
    expect((await ok(s, 'POST', '/ingest/life/stop')).json<IngestGauge>().paused).toBe(true);
    await produce(pool.brokers, topic, all.slice(400, 800), 2);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await gauge(s, 'life')).toMatchObject({ records: 400, paused: true, run: { state: 'stopped' } });
    expect((await gauge(s, 'life')).lag).toBe(400);

    const dataDir = s.dataDir;
    await s.close();
    servers.splice(servers.indexOf(s), 1);
    const again = await start(dataDir);
    await new Promise((r) => setTimeout(r, 500));
    expect((await gauge(again, 'life')).records).toBe(400);
    await ok(again, 'POST', '/ingest/life/start');
    await waitFor('800 after start', async () => (await gauge(again, 'life')).records === 800);

    // Restarted while running: resumes from the stored offsets (the group never commits).
    await again.close();
    servers.splice(servers.indexOf(again), 1);
    await produce(pool.brokers, topic, all.slice(800), 2);
    const third = await start(dataDir);
    await waitFor('all 1200', async () => (await gauge(third, 'life')).records === 1200);
    await new Promise((r) => setTimeout(r, 500));
    expect(await gauge(third, 'life')).toMatchObject({ records: 1200, deadLettered: 0, lag: 0 });
    await expectImported(third, 1200);

    await ok(third, 'DELETE', '/ingest/life');
    expect((await http(third, 'GET', '/ingest/life')).status).toBe(404);
    expect((await ok(third, 'GET', '/ingest')).json<{ ingests: unknown[] }>().ingests).toEqual([]);
  });
});
