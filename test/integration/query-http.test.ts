// The query endpoint over HTTP: every family of calls answered in JSON and in protobuf, the
// protobuf answers decoded and compared with the JSON ones; and a fuzz run of random and mutated
// PQL that must never crash the server (200 or a 4xx, then the server still answers right).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from '../../src/encoding/json.js';
import { decodeQueryResponse, encodeQueryRequest } from '../../src/encoding/public-proto.js';
import { queryResponseJson } from '../../src/encoding/query-json.js';
import { removeDir, startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const PB = { 'content-type': 'application/x-protobuf', accept: 'application/x-protobuf', 'pql-version': '1.0' };

async function json(index: string, pql: string, qs = ''): Promise<{ status: number; body: string }> {
  const r = await server.app.inject({ method: 'POST', url: `/index/${index}/query${qs}`, payload: pql });
  return { status: r.statusCode, body: r.body };
}

async function proto(
  index: string,
  pql: string,
  opts: { columnAttrs?: boolean; shards?: number[] } = {},
): Promise<{ status: number; body: Buffer; type: string }> {
  const r = await server.app.inject({
    method: 'POST',
    url: `/index/${index}/query`,
    payload: Buffer.from(encodeQueryRequest({ query: pql, ...opts })),
    headers: PB,
  });
  return { status: r.statusCode, body: r.rawPayload, type: String(r.headers['content-type']) };
}

beforeAll(async () => {
  server = await startServer();
  const setup: [string, string?][] = [
    ['/index/i'],
    ['/index/i/field/f'],
    ['/index/i/field/g'],
    ['/index/i/field/m', '{"options":{"type":"mutex"}}'],
    ['/index/i/field/b', '{"options":{"type":"bool"}}'],
    ['/index/i/field/n', '{"options":{"type":"int","min":-1000,"max":1000}}'],
    ['/index/i/field/t', '{"options":{"type":"time","timeQuantum":"YMD"}}'],
    ['/index/k', '{"options":{"keys":true}}'],
    ['/index/k/field/f', '{"options":{"keys":true}}'],
  ];
  for (const [url, body] of setup)
    expect((await server.app.inject({ method: 'POST', url, payload: body })).statusCode).toBe(200);
  const writes = [
    'Set(1, f=1) Set(2, f=1) Set(3, f=2) Set(1048577, f=1) Set(1, g=5) Set(2, g=6) Set(3, g=5)',
    'Set(1, m=1) Set(2, m=2) Set(1, b=true) Set(2, b=false) Set(1, n=10) Set(2, n=-20) Set(3, n=300)',
    'Set(4, t=1, 2019-01-02T03:00) Set(5, t=1, 2019-03-01T00:00)',
    'SetRowAttrs(f, 1, color="red", weight=3) SetColumnAttrs(1, name="one", ok=true)',
  ];
  for (const w of writes) expect((await json('i', w)).status).toBe(200);
  expect((await json('k', 'Set("a", f="x") Set("b", f="x") Set("a", f="y")')).status).toBe(200);
  expect((await server.app.inject({ method: 'POST', url: '/recalculate-caches' })).statusCode).toBe(204);
});

afterAll(async () => {
  await server.close();
  removeDir(server.dataDir);
});

const QUERIES: [string, string][] = [
  ['i', 'Row(f=1)'],
  ['i', 'Count(Intersect(Row(f=1), Row(g=5)))'],
  ['i', 'Union(Row(f=1), Row(f=2)) Difference(Row(f=1), Row(f=2)) Xor(Row(f=1), Row(g=5))'],
  ['i', 'Not(Row(f=1))'],
  ['i', 'Shift(Row(f=2), n=2)'],
  ['i', 'TopN(f, n=2) TopN(g, Row(f=1), n=5)'],
  ['i', 'Rows(f) Rows(g, limit=1)'],
  ['i', 'GroupBy(Rows(f), Rows(g))'],
  ['i', 'Sum(field=n) Min(field=n) Max(field=n) Sum(Row(f=1), field=n)'],
  ['i', 'MinRow(field=f) MaxRow(field=g)'],
  ['i', 'Row(n > 0) Row(n < 0) Row(-30 < n < 20) Row(n != null)'],
  ['i', 'Row(m=1) Row(b=true) Row(b=false)'],
  ['i', 'Row(t=1, from=2019-01-01T00:00, to=2019-02-01T00:00)'],
  ['i', 'Options(Row(f=1), excludeColumns=true) Options(Row(f=1), excludeRowAttrs=true)'],
  ['i', 'Set(9, f=9) Clear(9, f=9) ClearRow(f=9) Store(Row(f=1), f=8)'],
  ['i', 'SetRowAttrs(g, 5, x=1) SetColumnAttrs(2, y=2.5)'],
  ['k', 'Row(f="x") TopN(f) Rows(f) GroupBy(Rows(f))'],
];

describe('query endpoint', () => {
  for (const [index, pql] of QUERIES) {
    it(`JSON and protobuf agree: ${pql}`, async () => {
      // Writes change state: compare each against a fresh run of the same text in the other encoding.
      const j = await json(index, pql);
      expect(j.status, j.body).toBe(200);
      const p = await proto(index, pql);
      expect(p.status).toBe(200);
      expect(p.type).toMatch(/application\/(x-)?protobuf/);
      const decoded = decodeQueryResponse(p.body);
      expect(decoded.err).toBe('');
      const again = await json(index, pql);
      // Idempotent writes (Set/Clear of the same bits) answer differently the second time, so
      // for write queries the protobuf answer is compared with the second JSON run.
      const reference = /Set|Clear|Store/.test(pql) ? again.body : j.body;
      expect(stringify(queryResponseJson({ results: decoded.results }))).toBe(JSON.stringify(JSON.parse(reference)));
    });
  }

  it('columnAttrs arrive in both encodings', async () => {
    const j = await json('i', 'Row(f=1)', '?columnAttrs=true');
    const body = JSON.parse(j.body) as { columnAttrs: { id: number; attrs: Record<string, unknown> }[] };
    // Column 2's attribute was set by the SetColumnAttrs query above.
    const expected = [
      { id: 1, attrs: { name: 'one', ok: true } },
      { id: 2, attrs: { y: 2.5 } },
    ];
    expect(body.columnAttrs).toEqual(expected);
    const p = decodeQueryResponse((await proto('i', 'Row(f=1)', { columnAttrs: true })).body);
    expect(p.columnAttrs).toEqual(expected);
  });

  it('protobuf errors come back as QueryResponse.Err with 400', async () => {
    const p = await proto('i', 'Row(f=1');
    expect(p.status).toBe(400);
    expect(decodeQueryResponse(p.body).err).toMatch(/^parsing: /);
  });

  it('shards restrict execution in both encodings', async () => {
    const j = JSON.parse((await json('i', 'Row(f=1)', '?shards=1')).body) as { results: { columns: number[] }[] };
    expect(j.results[0].columns).toEqual([1048577]);
    const p = decodeQueryResponse((await proto('i', 'Row(f=1)', { shards: [0] })).body);
    expect(p.results[0]).toMatchObject({ type: 'row', columns: [1, 2] });
  });

  it('random and mutated PQL never crashes the server (200 or 4xx), and state answers stay right', async () => {
    const before = (await json('i', 'Row(f=1) Count(Row(g=5))')).body;
    const seeds = QUERIES.filter(([i]) => i === 'i').map(([, q]) =>
      q.replace(/Set|Clear|Store|SetRowAttrs|SetColumnAttrs/g, 'Row'),
    );
    const mutated = fc
      .tuple(fc.constantFrom(...seeds), fc.nat(200), fc.string({ maxLength: 6 }), fc.nat(3))
      .map(([q, at, s, how]) => {
        const p = at % (q.length + 1);
        return how === 0
          ? q.slice(0, p) + s + q.slice(p)
          : how === 1
            ? q.slice(0, p) + q.slice(p + s.length + 1)
            : how === 2
              ? q.slice(p)
              : s + q;
      });
    const text = fc.oneof(mutated, fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }));
    await fc.assert(
      fc.asyncProperty(text, async (q) => {
        const r = await json('i', q);
        expect([200, 400, 404, 413]).toContain(r.status);
        const body = JSON.parse(r.body) as { results?: unknown; error?: unknown };
        expect(r.status === 200 ? Array.isArray(body.results) : typeof body.error === 'string').toBe(true);
      }),
      { numRuns: 1500 },
    );
    expect((await server.app.inject({ method: 'GET', url: '/status' })).statusCode).toBe(200);
    expect((await json('i', 'Row(f=1) Count(Row(g=5))')).body).toBe(before);
  }, 120_000);
});
