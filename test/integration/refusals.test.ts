// Issue 15, defect 6: input that must be refused, each with a 400 naming the limit and nothing
// stored: deleting a reserved field, shard numbers past the ID range (import-roaring, imports,
// query arguments, Options, /internal and legacy routes), and import-roaring time views that are
// not views of the field's quantum. /internal/shards/max stays a number a uint64 parser takes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SHARD } from '../../src/domain/shard.js';
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';
import { encodeImportRoaringRequest, encodeQueryRequest } from '../../src/encoding/public-proto.js';
import { encodePilosaRoaring } from '../../src/roaring/pilosa-roaring.js';
import { RoaringBitmap32 } from '../../src/roaring/bitmap.js';
import { startServer, stopServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const PB = { 'content-type': 'application/x-protobuf' };

async function req(
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  payload?: string | Uint8Array,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const r = await server.app.inject({
    method,
    url,
    payload: payload instanceof Uint8Array ? Buffer.from(payload) : payload,
    headers,
  });
  return { status: r.statusCode, body: r.body };
}

const roaring = (view: string): Uint8Array =>
  encodeImportRoaringRequest({
    clear: false,
    views: [{ name: view, data: encodePilosaRoaring(new Map([[1, new RoaringBitmap32([5])]])) }],
  });

beforeAll(async () => {
  server = await startServer();
  for (const [url, body] of [
    ['/index/i', '{"options":{"trackExistence":true}}'],
    ['/index/i/field/f', ''],
    ['/index/i/field/t', '{"options":{"type":"time","timeQuantum":"YM"}}'],
  ])
    expect((await req('POST', url, body)).status).toBe(200);
  expect((await req('POST', '/index/i/query', 'Set(3, f=1)')).status).toBe(200);
});

afterAll(() => stopServer(server));

describe('reserved fields', () => {
  it('refuses DELETE of _exists and keeps existence tracking on', async () => {
    const r = await req('DELETE', '/index/i/field/_exists');
    expect(r.status).toBe(400);
    expect(r.body).toMatch(/field _exists is reserved/);
    // Not() needs existence: still answers column 3.
    const q = await req('POST', '/index/i/query', 'Not(Row(f=2))');
    expect(JSON.parse(q.body).results[0].columns).toEqual([3]);
  });

  it('refuses the legacy frame DELETE of _exists', async () => {
    const r = await req('DELETE', '/index/i/frame/_exists');
    expect(r.status).toBe(400);
    expect(r.body).toMatch(/frame _exists is reserved/);
  });
});

describe('shard range', () => {
  const tooBig = String(MAX_SHARD + 1);
  const limit = new RegExp(`go up to ${MAX_SHARD}`);

  it('import-roaring refuses shards past the ID range and non-numbers', async () => {
    for (const shard of [tooBig, '1152921504606846976', '99999999999999999999']) {
      const r = await req('POST', `/index/i/field/f/import-roaring/${shard}`, roaring(''), PB);
      expect(r.status, shard).toBe(400);
      expect(r.body, shard).toMatch(limit);
    }
    expect((await req('POST', '/index/i/field/f/import-roaring/-1', roaring(''), PB)).status).toBe(400);
    expect((await req('POST', '/index/i/field/f/import-roaring/1e3', roaring(''), PB)).status).toBe(400);
    // The largest shard is taken: its columns are ≤ 2^64 − 1.
    expect((await req('POST', `/index/i/field/f/import-roaring/${MAX_SHARD}`, roaring(''), PB)).status).toBe(200);
  });

  it('/internal/shards/max answers integers a uint64 parser takes', async () => {
    const r = await req('GET', '/internal/shards/max');
    expect(r.status).toBe(200);
    const text = /"i":(\d+)/.exec(r.body);
    expect(text?.[1]).toBe(String(MAX_SHARD));
    expect(BigInt(text?.[1] ?? '0') < 2n ** 64n).toBe(true);
  });

  it('imports refuse a body shard past the range', async () => {
    const body = encodeImportRequest({ index: 'i', field: 'f', shard: MAX_SHARD + 1, rowIds: [1], columnIds: [1] });
    const r = await req('POST', '/index/i/field/f/import', body, PB);
    expect(r.status).toBe(400);
    expect(r.body).toMatch(limit);
    const legacy = await req('POST', '/import', body, {
      'content-type': 'application/x-protobuf',
      accept: 'application/x-protobuf',
    });
    expect(legacy.status).toBe(400);
    expect(legacy.body).toMatch(/slice \d+ is out of range/);
  });

  it('query shards (argument, legacy slices, protobuf, Options) are range-checked', async () => {
    for (const qs of [`?shards=${tooBig}`, `?slices=0,${tooBig}`]) {
      const r = await req('POST', `/index/i/query${qs}`, 'Count(Row(f=1))');
      expect(r.status, qs).toBe(400);
      expect(r.body, qs).toMatch(limit);
    }
    const pb = await req(
      'POST',
      '/index/i/query',
      encodeQueryRequest({ query: 'Count(Row(f=1))', shards: [MAX_SHARD + 1] }),
      PB,
    );
    expect(pb.status).toBe(400);
    const opt = await req('POST', '/index/i/query', `Options(Count(Row(f=1)), shards=[${tooBig}])`);
    expect(opt.status).toBe(400);
    expect(opt.body).toMatch(limit);
  });

  it('/internal/fragment/nodes, /fragment/nodes and /export check the shard', async () => {
    for (const url of [
      `/internal/fragment/nodes?index=i&shard=${tooBig}`,
      `/fragment/nodes?index=i&slice=${tooBig}`,
      `/export?index=i&field=f&shard=${tooBig}`,
    ]) {
      const r = await req('GET', url, undefined, { accept: 'text/csv' });
      expect(r.status, url).toBe(400);
      expect(r.body, url).toMatch(/out of range/);
    }
  });
});

describe('import-roaring time views', () => {
  it('takes views of the quantum and refuses any other name', async () => {
    expect((await req('POST', '/index/i/field/t/import-roaring/0', roaring('2020'), PB)).status).toBe(200);
    expect((await req('POST', '/index/i/field/t/import-roaring/0', roaring('202001'), PB)).status).toBe(200);
    for (const view of ['../x', 'x'.repeat(2000), '20200101', '202013', '2020-01', '02020']) {
      const r = await req('POST', '/index/i/field/t/import-roaring/0', roaring(view), PB);
      expect(r.status, view.slice(0, 20)).toBe(400);
      expect(r.body, view.slice(0, 20)).toMatch(/is not a time view of field t \(time quantum YM\)/);
      expect(r.body.length).toBeLessThan(400);
    }
  });
});
