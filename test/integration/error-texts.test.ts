// Error texts that say what is wrong and where (call, argument, field, value, allowed range), the
// same status in JSON and protobuf, and 415 for import bodies of an unsupported Content-Type.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeQueryResponse, encodeQueryRequest } from '../../src/encoding/public-proto.js';
import { startServer, stopServer, type TestServer } from '../helpers/server.js';

let server: TestServer;

async function req(url: string, payload?: string | Buffer | Uint8Array, headers: Record<string, string> = {}) {
  const res = await server.app.inject({
    method: 'POST',
    url,
    payload: payload === undefined ? undefined : Buffer.from(payload),
    headers,
  });
  return { status: res.statusCode, body: res.body, raw: res.rawPayload };
}

/** The same query as PQL text with a JSON answer, and as a protobuf request with a protobuf answer. */
async function both(pql: string) {
  const j = await req('/index/i/query', pql);
  const p = await req('/index/i/query', encodeQueryRequest({ query: pql }), {
    'content-type': 'application/x-protobuf',
    accept: 'application/x-protobuf',
  });
  return {
    json: { status: j.status, error: (JSON.parse(j.body) as { error: string }).error },
    proto: { status: p.status, error: decodeQueryResponse(p.raw).err },
  };
}

beforeAll(async () => {
  server = await startServer();
  expect((await req('/index/i')).status).toBe(200);
  expect((await req('/index/i/field/s')).status).toBe(200);
  expect((await req('/index/i/field/n', '{"options":{"type":"int","min":0,"max":100}}')).status).toBe(200);
});
afterAll(() => stopServer(server));

describe('query error texts, JSON and protobuf alike', () => {
  const cases: [string, number, string][] = [
    [
      'Count(Rows(s))',
      400,
      'executing: Rows() does not return a bitmap and cannot be the input of Count(): expected a bitmap call (Row, Range, Union, Intersect, Difference, Xor, Not or Shift)',
    ],
    ['Set(1, n=5000)', 400, 'executing: Set() value 5000 for int field n is out of range: allowed 0 to 100'],
    ['Set(1, n=-1)', 400, 'executing: Set() value -1 for int field n is out of range: allowed 0 to 100'],
    ['Set(1, nosuchfield=1)', 404, 'executing: field not found: nosuchfield'],
    ['Row(nosuchfield=1)', 404, 'executing: map reduce: field not found: nosuchfield'],
    ['Count(Row(nosuchfield=1))', 404, 'executing: field not found: nosuchfield'],
    [
      'Union(Row(s=1), TopN(s))',
      400,
      'executing: map reduce: TopN() does not return a bitmap and cannot be the input of Union(): expected a bitmap call (Row, Range, Union, Intersect, Difference, Xor, Not or Shift)',
    ],
    ['Count(Nope(s=1))', 400, 'executing: unknown call: Nope'],
  ];
  it.each(cases)('%s', async (pql, status, text) => {
    const r = await both(pql);
    expect(r.json).toEqual({ status, error: text });
    expect(r.proto).toEqual({ status, error: text });
  });
});

describe('bodies that do not match their Content-Type', () => {
  it('PQL text sent as protobuf is told so', async () => {
    const r = await req('/index/i/query', 'Set(1, s=1)', { 'content-type': 'application/x-protobuf' });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toEqual({
      error: expect.stringMatching(
        /^the body looks like PQL text but the Content-Type says protobuf: send PQL with Content-Type text\/plain/,
      ),
    });
    // Nothing was written.
    expect(JSON.parse((await req('/index/i/query', 'Count(Row(s=1))')).body)).toEqual({ results: [0] });
  });

  it('a body that is neither PQL nor protobuf keeps the decoder text', async () => {
    const r = await req('/index/i/query', Buffer.from([0xff, 0xff, 0xff]), {
      'content-type': 'application/x-protobuf',
    });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).error).toMatch(/^unmarshaling query request/);
  });

  it.each([
    ['/index/i/field/s/import', 'application/xml', 'application/x-protobuf or application/json'],
    ['/index/i/field/s/import', 'text/csv', 'application/x-protobuf or application/json'],
    ['/index/i/field/n/import', 'multipart/form-data; boundary=x', 'application/x-protobuf or application/json'],
    ['/index/i/field/s/import-roaring/0', 'application/json', 'application/x-protobuf'],
  ])('import to %s with %s: 415', async (url, type, accepted) => {
    const r = await req(url, '{"rowIDs":[1],"columnIDs":[2]}', { 'content-type': type });
    expect(r.status).toBe(415);
    expect(JSON.parse(r.body)).toEqual({
      success: false,
      error: { message: `unsupported Content-Type for an import: ${type.split(';')[0]}; send ${accepted}` },
    });
  });

  it('JSON imports with JSON, text or form Content-Types still work', async () => {
    for (const [col, type] of [
      [10, 'application/json'],
      [11, 'text/plain'],
      [12, 'application/x-www-form-urlencoded'],
    ] as const) {
      const r = await req('/index/i/field/s/import', JSON.stringify({ rowIDs: [7], columnIDs: [col] }), {
        'content-type': type,
      });
      expect(r.status, r.body).toBe(200);
    }
    expect(JSON.parse((await req('/index/i/query', 'Row(s=7)')).body).results[0].columns).toEqual([10, 11, 12]);
  });
});
