// Internal endpoints Pilosa client libraries call (translate keys, fragment nodes, max shards)
// and GET /export, over inject() against a real server and LevelDB; keys survive a restart.
import { afterEach, describe, expect, it } from 'vitest';
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';
import { decodeTranslateKeysResponse, encodeTranslateKeysRequest } from '../../src/encoding/public-proto.js';
import { startServer, type TestServer, stopServer } from '../helpers/server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await stopServer(server);
  server = undefined;
});

type Method = 'GET' | 'POST' | 'DELETE';

async function call(method: Method, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const payload =
    body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const res = await server!.app.inject({ method, url, payload, headers });
  return { status: res.statusCode, raw: res.body, rawPayload: res.rawPayload, type: res.headers['content-type'] };
}

const json = async (method: Method, url: string, body?: unknown) => {
  const r = await call(method, url, body);
  return { status: r.status, body: r.raw === '' ? undefined : (JSON.parse(r.raw) as unknown) };
};

const PROTO = { 'content-type': 'application/x-protobuf', accept: 'application/x-protobuf' };

async function translate(index: string, field: string, keys: string[]) {
  const r = await call(
    'POST',
    '/internal/translate/keys',
    Buffer.from(encodeTranslateKeysRequest({ index, field, keys })),
    PROTO,
  );
  return {
    status: r.status,
    ids: r.status === 200 ? decodeTranslateKeysResponse(r.rawPayload) : undefined,
    raw: r.raw,
    type: r.type,
  };
}

describe('POST /internal/translate/keys', () => {
  it('assigns column and row key IDs from 1, idempotently, and keeps them across a restart', async () => {
    server = await startServer();
    await json('POST', '/index/k', { options: { keys: true } });
    await json('POST', '/index/k/field/f', { options: { keys: true } });

    const cols = await translate('k', '', ['a', 'b', 'a', 'c']);
    expect(cols).toMatchObject({ status: 200, ids: [1, 2, 1, 3] });
    expect(cols.type).toContain('application/x-protobuf');
    expect((await translate('k', '', ['c', 'd'])).ids).toEqual([3, 4]);
    expect((await translate('k', 'f', ['x', 'y'])).ids).toEqual([1, 2]);
    expect((await translate('k', '', [])).ids).toEqual([]);

    // The keys are those queries use: a Set with key "b" lands on column 2.
    await call('POST', '/index/k/query', 'Set("b", f="y")');
    expect((await json('POST', '/index/k/query', 'Row(f="y")')).body).toEqual({
      results: [{ attrs: {}, columns: [], keys: ['b'] }],
    });

    const dataDir = server.dataDir;
    await server.close();
    server = await startServer({ dataDir });
    expect((await translate('k', '', ['d', 'e', 'a'])).ids).toEqual([4, 5, 1]);
    expect((await translate('k', 'f', ['y', 'z'])).ids).toEqual([2, 3]);
  });

  it('answers 404 for unknown index or field, 400 without keys, 415 without protobuf', async () => {
    server = await startServer();
    await json('POST', '/index/plain');
    await json('POST', '/index/plain/field/f');
    await json('POST', '/index/k', { options: { keys: true } });

    const missingIndex = await translate('nope', '', ['a']);
    expect(missingIndex.status).toBe(404);
    expect(JSON.parse(missingIndex.raw)).toEqual({ success: false, error: { message: 'index not found: nope' } });
    expect((await translate('k', 'nope', ['a'])).status).toBe(404);
    expect((await translate('plain', '', ['a'])).status).toBe(400);
    expect((await translate('plain', 'f', ['a'])).status).toBe(400);

    const body = Buffer.from(encodeTranslateKeysRequest({ index: 'k', field: '', keys: ['a'] }));
    expect((await call('POST', '/internal/translate/keys', body, { 'content-type': 'application/json' })).status).toBe(
      415,
    );
    expect(
      (
        await call('POST', '/internal/translate/keys', body, {
          'content-type': 'application/x-protobuf',
          accept: 'text/csv',
        })
      ).status,
    ).toBe(406);
    expect((await call('POST', '/internal/translate/keys', Buffer.from([0xff, 0xff]), PROTO)).status).toBe(400);
  });
});

describe('GET /internal/fragment/nodes and /internal/shards/max', () => {
  it('lists this node as the owner of any shard', async () => {
    server = await startServer();
    const r = await json('GET', '/internal/fragment/nodes?shard=3&index=i');
    expect(r.status).toBe(200);
    const nodes = r.body as {
      id: string;
      uri: { scheme: string; host: string; port: number };
      isCoordinator: boolean;
      state: string;
    }[];
    expect(nodes).toHaveLength(1);
    expect(nodes[0]).toMatchObject({ uri: { scheme: 'http', host: '127.0.0.1' }, isCoordinator: true, state: 'READY' });
    const status = (await json('GET', '/status')).body as { nodes: unknown[] };
    expect(nodes).toEqual(status.nodes);
  });

  it('validates its arguments like Pilosa', async () => {
    server = await startServer();
    expect(await json('GET', '/internal/fragment/nodes?shard=0')).toEqual({
      status: 400,
      body: { error: 'index is required' },
    });
    expect(await json('GET', '/internal/fragment/nodes?index=i')).toEqual({
      status: 400,
      body: { error: 'shard is required' },
    });
    expect(await json('GET', '/internal/fragment/nodes?index=i&shard=0&x=1')).toEqual({
      status: 400,
      body: { error: 'x is not a valid argument' },
    });
    expect(await json('GET', '/internal/fragment/nodes?index=i&shard=-1')).toEqual({
      status: 400,
      body: { error: 'shard should be an unsigned integer' },
    });
  });

  it('reports the highest shard with data per index, 0 for empty ones', async () => {
    server = await startServer();
    expect(await json('GET', '/internal/shards/max')).toEqual({ status: 200, body: { standard: {} } });
    await json('POST', '/index/b');
    await json('POST', '/index/a');
    await json('POST', '/index/a/field/f');
    await call('POST', '/index/a/query', `Set(${3 * 1048576 + 1}, f=1) Set(5, f=1)`);
    expect(await json('GET', '/internal/shards/max')).toEqual({ status: 200, body: { standard: { a: 3, b: 0 } } });
  });
});

describe('GET /export', () => {
  const CSV = { accept: 'text/csv' };

  it('exports the standard view of one shard as row,column lines ordered by row then column', async () => {
    server = await startServer();
    await json('POST', '/index/i');
    await json('POST', '/index/i/field/f');
    await json('POST', '/index/i/field/t', { options: { type: 'time', timeQuantum: 'YMD' } });
    await call(
      'POST',
      '/index/i/query',
      `Set(7, f=2) Set(3, f=2) Set(9, f=1) Set(${1048576 + 4}, f=1) Set(1, t=5, 2019-01-02T00:00)`,
    );

    const r = await call('GET', '/export?index=i&field=f&shard=0', undefined, CSV);
    expect(r).toMatchObject({ status: 200, raw: '1,9\n2,3\n2,7\n' });
    expect(r.type).toContain('text/csv');
    expect((await call('GET', '/export?index=i&field=f&shard=1', undefined, CSV)).raw).toBe(`1,${1048576 + 4}\n`);
    expect(await call('GET', '/export?index=i&field=f&shard=9', undefined, CSV)).toMatchObject({
      status: 200,
      raw: '',
    });
    expect((await call('GET', '/export?index=i&field=t&shard=0', undefined, CSV)).raw).toBe('5,1\n');
    // 0.x clients name the frame and the slice.
    expect((await call('GET', '/export?index=i&frame=f&slice=0&view=standard', undefined, CSV)).raw).toBe(
      '1,9\n2,3\n2,7\n',
    );
  });

  it('writes a large shard in slices, from rows copied in one read', async () => {
    server = await startServer();
    await json('POST', '/index/i');
    await json('POST', '/index/i/field/f');
    const columnIds = Array.from({ length: 300_000 }, (_, k) => k * 3);
    const body = encodeImportRequest({ index: 'i', field: 'f', shard: 0, rowIds: columnIds.map(() => 1), columnIds });
    const imported = await server.app.inject({
      method: 'POST',
      url: '/index/i/field/f/import',
      headers: { 'content-type': 'application/x-protobuf' },
      payload: Buffer.from(body),
    });
    expect(imported.statusCode).toBe(200);
    const port = await server.listen();
    const res = await fetch(`http://127.0.0.1:${port}/export?index=i&field=f&shard=0`, { headers: CSV });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/csv');
    // Chunked: the answer had no length when its first slice left.
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const lines = (await res.text()).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.length).toBe(300_000);
    expect([lines[0], lines[1], lines[lines.length - 1]]).toEqual(['1,0', '1,3', `1,${299_999 * 3}`]);
  });

  it('prints keys for keyed fields and indexes, CSV-quoted when needed', async () => {
    server = await startServer();
    await json('POST', '/index/k', { options: { keys: true } });
    await json('POST', '/index/k/field/f', { options: { keys: true } });
    await call('POST', '/index/k/query', 'Set("c1", f="x") Set("c,2", f="x") Set("c1", f="y")');
    expect((await call('GET', '/export?index=k&field=f&shard=0', undefined, CSV)).raw).toBe('x,c1\nx,"c,2"\ny,c1\n');
  });

  it('refuses bad requests', async () => {
    server = await startServer();
    await json('POST', '/index/i');
    await json('POST', '/index/i/field/f');
    expect((await call('GET', '/export?index=i&field=f&shard=0')).status).toBe(406);
    expect(
      (await call('GET', '/export?index=i&field=f&shard=0', undefined, { accept: 'application/json' })).status,
    ).toBe(406);
    const missing = await call('GET', '/export?index=i&shard=0', undefined, CSV);
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.raw)).toEqual({ error: 'field is required' });
    expect((await call('GET', '/export?index=i&field=f&shard=x', undefined, CSV)).status).toBe(400);
    expect((await call('GET', '/export?index=i&field=f&shard=0&extra=1', undefined, CSV)).status).toBe(400);
    expect((await call('GET', '/export?index=nope&field=f&shard=0', undefined, CSV)).status).toBe(404);
    expect((await call('GET', '/export?index=i&field=nope&shard=0', undefined, CSV)).status).toBe(404);
  });
});
