// Real event streams carry properties no field maps: with "unmappedProperties": "ignore" such
// records are imported (only mapped properties read, "required" ones must be there); with the
// default they are dead-lettered, and a dead-letter rate over the threshold is warned and counted.
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { consume, createTopic, ok, produce, uniqueTopic, waitFor, kafkaServerPool } from './kafka-support.js';

const pool = kafkaServerPool();

interface Gauge {
  records: number;
  deadLettered: number;
  definition: Record<string, unknown>;
  run: { deadLetterRateWarnings: number };
}

async function setup(s: TestServer, index: string): Promise<void> {
  await ok(s, 'POST', `/index/${index}`, {});
  await ok(s, 'POST', `/index/${index}/field/color`, {});
  await ok(s, 'POST', `/index/${index}/field/score`, { options: { type: 'int', min: 0, max: 1000 } });
}

function definition(
  topic: string,
  index: string,
  group: string,
  extra: Record<string, unknown>,
): Record<string, unknown> {
  return {
    topic,
    index,
    group,
    column: { field: 'id' },
    fields: [
      { name: 'color', field: 'color', mapping: 'mapping', valueMap: { red: 1, blue: 2 }, required: true },
      { name: 'score', field: 'score', mapping: 'int' },
    ],
    ...extra,
  };
}

describe('ingest of records with properties the definition does not map (real broker)', () => {
  it('imports them with unmappedProperties "ignore", dead-letters them by default, and warns about the rate', async () => {
    const topic = uniqueTopic('unmapped');
    await createTopic(pool.brokers, topic, 1);
    const s = await pool.start();
    await setup(s, 'loose');
    await setup(s, 'strict');
    await ok(
      s,
      'POST',
      '/ingest/loose',
      definition(topic, 'loose', `g-loose-${topic}`, { unmappedProperties: 'ignore' }),
    );
    await ok(
      s,
      'POST',
      '/ingest/strict',
      definition(topic, 'strict', `g-strict-${topic}`, { deadLetterWarnRatio: 0.5 }),
    );
    const N = 40;
    const records: object[] = [];
    for (let i = 0; i < N; i++)
      records.push({ id: i, color: i % 2 === 0 ? 'red' : 'blue', score: i, active: true, session: { browser: 'x' } });
    records.push({ id: 999, score: 1, extra: 1 }); // no color: required with the option on
    await produce(pool.brokers, topic, records);

    await waitFor('both ingests through', async () => {
      const a = (await ok(s, 'GET', '/ingest/loose')).json<Gauge>();
      const b = (await ok(s, 'GET', '/ingest/strict')).json<Gauge>();
      return a.records + a.deadLettered === N + 1 && b.records + b.deadLettered === N + 1;
    });
    const loose = (await ok(s, 'GET', '/ingest/loose')).json<Gauge>();
    expect(loose).toMatchObject({ records: N, deadLettered: 1, definition: { unmappedProperties: 'ignore' } });
    const q = async (index: string, pql: string): Promise<unknown> =>
      (await ok(s, 'POST', `/index/${index}/query`, pql)).json<{ results: unknown[] }>().results[0];
    expect(await q('loose', 'Count(Row(color=1))')).toBe(N / 2);
    expect(await q('loose', 'Sum(field=score)')).toEqual({ value: (N * (N - 1)) / 2, count: N });
    expect(loose.run.deadLetterRateWarnings).toBe(0);

    const strict = (await ok(s, 'GET', '/ingest/strict')).json<Gauge>();
    expect(strict).toMatchObject({
      records: 0,
      deadLettered: N + 1,
      definition: { unmappedProperties: 'dead-letter', deadLetterWarnRatio: 0.5 },
    });
    expect(strict.run.deadLetterRateWarnings).toBeGreaterThanOrEqual(1);
    expect(await q('strict', 'Count(Row(color=1))')).toBe(0);

    const dead = await consume(pool.brokers, `${topic}.dlq`, N + 2);
    const reasons = dead.map((m) => m.headers?.['bl-error']?.toString() ?? '');
    expect(reasons.filter((r) => r.startsWith('field not found: active')).length).toBe(N);
    // Both definitions require color: the record without it is dead-lettered by each.
    expect(reasons.filter((r) => r === 'required property color is missing')).toHaveLength(2);
  });

  it('validates the new options', async () => {
    const s = await pool.start();
    await setup(s, 'v');
    const topic = uniqueTopic('unmapped-v');
    for (const [extra, text] of [
      [{ unmappedProperties: 'drop' }, /unmappedProperties must be "dead-letter" or "ignore"/],
      [{ deadLetterWarnRatio: 2 }, /deadLetterWarnRatio must be a number from 0 to 1/],
    ] as const) {
      const r = await s.app.inject({ method: 'POST', url: '/ingest/v', payload: definition(topic, 'v', 'g', extra) });
      expect(r.statusCode).toBe(400);
      expect((JSON.parse(r.body) as { error: { message: string } }).error.message).toMatch(text);
    }
  });
});
