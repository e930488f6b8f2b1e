// The lean query path (http/lean-query.ts) against fastify's query route: the same requests sent
// over a socket (the front door answers the plain ones) and through inject() (fastify's route
// alone) get the same status, Content-Type and body; the door's count says which way each went.
// Also its records (request id, metrics, PQL label), read-only tokens, and large sliced answers.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeImportRoaringRequest, encodeQueryRequest } from '../../src/encoding/public-proto.js';
import { RoaringBitmap32 } from '../../src/roaring/bitmap.js';
import { encodePilosaRoaring } from '../../src/roaring/pilosa-roaring.js';
import { parsePromText, promValue } from '../helpers/prom-text.js';
import { type TestServer, removeDir, startServer, stopServer, tempDir } from '../helpers/server.js';

interface Answer {
  status: number;
  type: string | undefined;
  body: string;
  id: string | undefined;
}

/** The request over the socket and through inject(); `took`: whether the front door answered it. */
async function both(
  s: TestServer,
  url: string,
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<{ lean: Answer; fastify: Answer; took: boolean }> {
  const taken = s.front.taken;
  const r = await fetch(`${url}${path}`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'text/plain', ...headers },
  });
  const lean = {
    status: r.status,
    type: r.headers.get('content-type') ?? undefined,
    body: await r.text(),
    id: r.headers.get('x-request-id') ?? undefined,
  };
  const took = s.front.taken > taken;
  const i = await s.app.inject({
    method: 'POST',
    url: path,
    payload: body,
    headers: { 'content-type': 'text/plain', ...headers },
  });
  const fastify = {
    status: i.statusCode,
    type: i.headers['content-type'] as string | undefined,
    body: i.body,
    id: i.headers['x-request-id'] as string | undefined,
  };
  return { lean, fastify, took };
}

/** Same status, type and body both ways. */
function same(a: { lean: Answer; fastify: Answer }): void {
  expect({ ...a.lean, id: undefined }).toEqual({ ...a.fastify, id: undefined });
}

describe('the lean query path beside fastify', () => {
  let s: TestServer;
  let url: string;
  beforeAll(async () => {
    s = await startServer();
    url = `http://127.0.0.1:${await s.listen()}`;
    for (const p of ['/index/i', '/index/i/field/f', '/index/i/field/g', '/index/k', '/index/k/field/f'])
      expect(
        (
          await s.app.inject({
            method: 'POST',
            url: p,
            payload:
              p === '/index/k'
                ? '{"options":{"keys":true}}'
                : p.endsWith('/k/field/f')
                  ? '{"options":{"keys":true}}'
                  : '',
          })
        ).statusCode,
      ).toBe(200);
    const w = await s.app.inject({
      method: 'POST',
      url: '/index/i/query',
      payload: 'Set(1, f=1) Set(2, f=1) Set(2, f=2) Set(1048580, f=1)',
    });
    expect(w.statusCode).toBe(200);
    expect((await s.app.inject({ method: 'POST', url: '/index/k/query', payload: 'Set("a", f="x")' })).statusCode).toBe(
      200,
    );
    // Row 3 of g: every column of shard 0, an answer of more than a MB (written in slices).
    const all = new RoaringBitmap32();
    all.addRange(0, 300_000);
    const body = encodeImportRoaringRequest({
      clear: false,
      views: [{ name: '', data: encodePilosaRoaring(new Map([[3, all]])) }],
    });
    const r = await s.app.inject({
      method: 'POST',
      url: '/index/i/field/g/import-roaring/0',
      payload: Buffer.from(body),
      headers: { 'content-type': 'application/x-protobuf' },
    });
    expect(r.statusCode, r.body).toBe(200);
  });
  afterAll(() => stopServer(s));

  it('answers reads as fastify does', async () => {
    for (const [index, pql] of [
      ['i', 'Count(Intersect(Row(f=1), Row(f=2)))'],
      ['i', 'Row(f=1)'],
      ['i', 'TopN(f, n=2) Rows(f)'],
      ['i', 'GroupBy(Rows(f))'],
      ['k', 'Row(f="x")'],
      ['i', 'Bitmap(frame=f, rowID=1)'],
      ['i', ''],
    ]) {
      const a = await both(s, url, `/index/${index}/query`, pql);
      expect(a.took, pql).toBe(true);
      expect(a.lean.status, a.lean.body).toBe(200);
      same(a);
    }
  });

  it('answers errors in the query route shape, as fastify does', async () => {
    for (const [index, pql] of [
      ['nope', 'Count(Row(f=1))'],
      ['i', 'Count(Row(f=1)'],
      ['i', 'Row(zz=1)'],
      ['i', 'Frobnicate()'],
    ]) {
      const a = await both(s, url, `/index/${index}/query`, pql);
      expect(a.took, pql).toBe(true);
      expect(a.lean.status).toBeGreaterThanOrEqual(400);
      same(a);
      expect(JSON.parse(a.lean.body)).toHaveProperty('error');
    }
  });

  it('writes through the query service', async () => {
    const a = await both(s, url, '/index/i/query', 'Set(77, f=7)');
    expect(a.took).toBe(true);
    expect(a.lean.body).toBe('{"results":[true]}\n');
    expect(a.fastify.body).toBe('{"results":[false]}\n');
    expect((await both(s, url, '/index/i/query', 'Row(f=7)')).lean.body).toBe(
      '{"results":[{"attrs":{},"columns":[77]}]}\n',
    );
  });

  it('writes large answers in slices, the same bytes', async () => {
    const a = await both(s, url, '/index/i/query', 'Row(g=3)');
    expect(a.took).toBe(true);
    expect(a.lean.body.length).toBeGreaterThan(1024 * 1024);
    same(a);
  });

  it('leaves protobuf, URL arguments, other routes and other names to fastify', async () => {
    const pb = Buffer.from(encodeQueryRequest({ query: 'Count(Row(f=1))' }));
    for (const [path, body, headers] of [
      ['/index/i/query', pb, { 'content-type': 'application/x-protobuf', accept: 'application/x-protobuf' }],
      ['/index/i/query', 'Count(Row(f=1))', { accept: 'application/x-protobuf' }],
      ['/index/i/query?shards=0', 'Count(Row(f=1))', {}],
      ['/index/i/query?timeout=bad', 'Count(Row(f=1))', {}],
      ['/index/I/query', 'Count(Row(f=1))', {}],
      ['/index/i%41/query', 'Count(Row(f=1))', {}],
      ['/index/1i/query', 'Count(Row(f=1))', {}],
      ['/index/i/query/', 'Count(Row(f=1))', {}],
      ['/index//query', 'Count(Row(f=1))', {}],
      ['/index/i/field/f', '', {}],
    ] as [string, string | Buffer, Record<string, string>][]) {
      const a = await both(s, url, path, body, headers);
      expect(a.took, path).toBe(false);
      same(a);
    }
  });

  it('echoes a plain client request id and makes one otherwise, and records the request', async () => {
    const scrape = async () => parsePromText((await s.app.inject({ method: 'GET', url: '/metrics' })).body).samples;
    const q = { route: '/index/:index/query', method: 'POST', status: '200' };
    const before = await scrape();
    const given = await both(s, url, '/index/i/query', 'Count(Row(f=1))', { 'x-request-id': 'client-7' });
    expect(given.took).toBe(true);
    expect(given.lean.id).toBe('client-7');
    const made = await both(s, url, '/index/i/query', 'Count(Row(f=1))', { 'x-request-id': 'no spaces allowed' });
    expect(made.lean.id).toMatch(/^[0-9a-z]+-[0-9a-z]+$/);
    const after = await scrape();
    const count = (xs: typeof after, name: string, m: Record<string, string>) => promValue(xs, name, m);
    // Two each way: the door's and fastify's records are the same metrics.
    expect(
      count(after, 'bitledger_http_request_duration_seconds_count', q) -
        count(before, 'bitledger_http_request_duration_seconds_count', q),
    ).toBe(4);
    expect(
      count(after, 'bitledger_pql_request_duration_seconds_count', { call: 'Count' }) -
        count(before, 'bitledger_pql_request_duration_seconds_count', { call: 'Count' }),
    ).toBe(4);
  });
});

describe('the lean query path with bearer tokens', () => {
  let s: TestServer;
  let url: string;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir();
    const file = join(dir, 'tokens');
    writeFileSync(file, 'ro-token read-only\nrw-token read-write\n');
    s = await startServer({ authTokenFile: file });
    url = `http://127.0.0.1:${await s.listen()}`;
    const rw = { authorization: 'Bearer rw-token' };
    for (const p of ['/index/i', '/index/i/field/f'])
      expect((await s.app.inject({ method: 'POST', url: p, payload: '', headers: rw })).statusCode).toBe(200);
  });
  afterAll(async () => {
    await stopServer(s);
    removeDir(dir);
  });

  it('reads with either token, refuses writes of a read-only one, and leaves refusals to fastify', async () => {
    const ro = { authorization: 'Bearer ro-token' };
    const rw = { authorization: 'Bearer rw-token' };
    const write = await both(s, url, '/index/i/query', 'Set(1, f=1)', rw);
    expect(write.took).toBe(true);
    expect(write.lean.status).toBe(200);
    const read = await both(s, url, '/index/i/query', 'Count(Row(f=1))', ro);
    expect(read.took).toBe(true);
    expect(read.lean.body).toBe('{"results":[1]}\n');
    same(read);
    const refused = await both(s, url, '/index/i/query', 'Set(2, f=1)', ro);
    expect(refused.took).toBe(true);
    expect(refused.lean.status).toBe(403);
    same(refused);
    const refusals: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong' },
      { ...rw, origin: 'http://evil.example' },
    ];
    for (const headers of refusals) {
      const a = await both(s, url, '/index/i/query', 'Count(Row(f=1))', headers);
      expect(a.took).toBe(false);
      expect(a.lean.status === 401 || a.lean.status === 403).toBe(true);
      same(a);
    }
  });
});
