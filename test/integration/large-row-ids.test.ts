// Row IDs past 2^32 and 2^44 (where Pilosa's row × 2^20 overflows and answers another row's
// columns) answer their own columns; past 2^53−1 they are refused naming the limit, never
// answered with a wrong row. Keyed and not keyed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const q = async (index: string, pql: string) => {
  const r = await s.app.inject({ method: 'POST', url: `/index/${index}/query`, payload: pql });
  return { status: r.statusCode, json: JSON.parse(r.body) as { results?: unknown[]; error?: string } };
};
const ROWS = ['1', '4294967296', '17592186044416', '17592186044417', '9007199254740991'];

beforeAll(async () => {
  s = await startServer();
  for (const [url, body] of [
    ['/index/i', ''],
    ['/index/i/field/s', ''],
    ['/index/k', '{"options":{"keys":true}}'],
    ['/index/k/field/s', ''],
  ]) {
    expect((await s.app.inject({ method: 'POST', url, payload: body })).statusCode).toBe(200);
  }
  expect((await q('i', ROWS.map((r, i) => `Set(${i + 1}, s=${r})`).join(' '))).status).toBe(200);
  expect((await q('k', ROWS.map((r, i) => `Set("c${i + 1}", s=${r})`).join(' '))).status).toBe(200);
});
afterAll(() => stopServer(s));

describe('row IDs 2^32, 2^44 and up to 2^53−1', () => {
  it('Row, Count, TopN, Rows and GroupBy answer each row exactly', async () => {
    const r = await q(
      'i',
      `${ROWS.map((x) => `Row(s=${x})`).join(' ')} Count(Row(s=17592186044416)) Row(s=0) TopN(s) Rows(s)`,
    );
    expect(r.json.results).toEqual([
      ...ROWS.map((_, i) => ({ attrs: {}, columns: [i + 1] })),
      1,
      { attrs: {}, columns: [] },
      ROWS.map((x) => ({ id: Number(x), count: 1 })),
      { rows: ROWS.map(Number) },
    ]);
    const g = await q('i', 'GroupBy(Rows(s))');
    expect(g.json.results?.[0]).toEqual(ROWS.map((x) => ({ group: [{ field: 's', rowID: Number(x) }], count: 1 })));
  });

  it('on a keyed index', async () => {
    const r = await q('k', ROWS.map((x) => `Row(s=${x})`).join(' '));
    expect(r.json.results).toEqual(ROWS.map((_, i) => ({ attrs: {}, columns: [], keys: [`c${i + 1}`] })));
  });

  it.each(['9007199254740992', '9007199254740993', '9223372036854775807'])(
    'row %s is refused naming the limit',
    async (row) => {
      for (const [index, pql] of [
        ['i', `Row(s=${row})`],
        ['i', `Set(9, s=${row})`],
        ['k', `Row(s=${row})`],
      ]) {
        const r = await q(index, pql);
        expect(r.status).toBe(400);
        expect(r.json.error).toMatch(new RegExp(`value ${row} is larger than the supported maximum 9007199254740991`));
      }
      expect((await q('i', 'Count(Row(s=1))')).json.results).toEqual([1]);
    },
  );
});
