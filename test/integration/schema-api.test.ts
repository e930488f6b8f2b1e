// Every admin endpoint of the current API with its exact JSON shape, per field type, over
// fastify inject() against a real LevelDB; and the same schema after a restart.
import { afterEach, describe, expect, it } from 'vitest';
import { removeDir, startServer, type TestServer, stopServer } from '../helpers/server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await stopServer(server);
  server = undefined;
});

async function call(method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
  const res = await server!.app.inject({
    method,
    url,
    payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: res.statusCode,
    body: res.body === '' ? undefined : (JSON.parse(res.body) as unknown),
    raw: res.body,
  };
}

describe('schema API', () => {
  it('creates indexes and fields of every type and lists them in Pilosa 1.4 shapes', async () => {
    server = await startServer();
    expect(await call('GET', '/schema')).toMatchObject({ status: 200, body: { indexes: null } });
    expect(await call('POST', '/index/i')).toEqual({ status: 200, body: { success: true }, raw: '{"success":true}\n' });
    expect((await call('POST', '/index/k', { options: { keys: true, trackExistence: false } })).body).toEqual({
      success: true,
    });
    expect((await call('GET', '/index/i')).body).toEqual({
      name: 'i',
      options: { keys: false, trackExistence: true },
      fields: null,
      shardWidth: 1048576,
    });

    const fields: [string, unknown][] = [
      ['plain', undefined],
      ['s', { options: { type: 'set', cacheType: 'LRU', cacheSize: 100, keys: true } }],
      ['m', { options: { type: 'mutex' } }],
      ['b', { options: { type: 'bool' } }],
      ['t', { options: { type: 'time', timeQuantum: 'YMD' } }],
      ['tn', { options: { type: 'time', timeQuantum: 'YMDH', noStandardView: true } }],
      ['n', { options: { type: 'int', min: -1000, max: 1000 } }],
      ['u', { options: { type: 'int' } }],
      ['nc', { options: { type: 'set', cacheType: 'none' } }],
      ['empty', {}],
    ];
    for (const [name, body] of fields)
      expect((await call('POST', `/index/i/field/${name}`, body)).body).toEqual({ success: true });

    const listing = (await call('GET', '/index/i')).raw;
    expect(listing).toContain('"max":9223372036854775807'); // exact, not rounded to 2^63
    expect(listing).toContain('"min":-9223372036854775808');
    const idx = (await call('GET', '/index/i')).body as { fields: { name: string; options: unknown }[] };
    const byName = Object.fromEntries(idx.fields.map((f) => [f.name, f.options]));
    expect(idx.fields.map((f) => f.name)).toEqual(['b', 'empty', 'm', 'n', 'nc', 'plain', 's', 't', 'tn', 'u']);
    expect(byName.plain).toEqual({ type: 'set', cacheType: 'ranked', cacheSize: 50000, keys: false });
    expect(byName.empty).toEqual({ type: 'set', cacheType: 'ranked', cacheSize: 50000, keys: false });
    expect(byName.s).toEqual({ type: 'set', cacheType: 'lru', cacheSize: 100, keys: true });
    expect(byName.m).toEqual({ type: 'mutex', cacheType: 'ranked', cacheSize: 50000, keys: false });
    expect(byName.b).toEqual({ type: 'bool' });
    expect(byName.t).toEqual({ type: 'time', timeQuantum: 'YMD', keys: false, noStandardView: false });
    expect(byName.tn).toEqual({ type: 'time', timeQuantum: 'YMDH', keys: false, noStandardView: true });
    expect(byName.n).toEqual({ type: 'int', base: 0, bitDepth: 0, min: -1000, max: 1000, keys: false });
    expect(byName.nc).toEqual({ type: 'set', cacheType: 'none', cacheSize: 0, keys: false });

    const schema = (await call('GET', '/schema')).body as { indexes: { name: string }[] };
    expect(schema.indexes.map((i) => i.name)).toEqual(['i', 'k']);
    expect((await call('GET', '/index')).body).toEqual(schema);

    // The schema survives a restart.
    const dataDir = server.dataDir;
    await server.close();
    server = await startServer({ dataDir });
    expect((await call('GET', '/schema')).body).toEqual(schema);
  });

  it('int base follows Pilosa: min when min > 0, max when max < 0', async () => {
    server = await startServer();
    await call('POST', '/index/i');
    await call('POST', '/index/i/field/pos', { options: { type: 'int', min: 10, max: 20 } });
    await call('POST', '/index/i/field/neg', { options: { type: 'int', min: -20, max: -10 } });
    const f = ((await call('GET', '/index/i')).body as { fields: { name: string; options: { base: number } }[] })
      .fields;
    expect(f.find((x) => x.name === 'pos')!.options.base).toBe(10);
    expect(f.find((x) => x.name === 'neg')!.options.base).toBe(-10);
  });

  it('accepts the top-level fields array form (int fields created beside the field)', async () => {
    server = await startServer();
    await call('POST', '/index/i');
    expect(
      (await call('POST', '/index/i/field/f', { fields: [{ name: 'price', type: 'int', min: 0, max: 100 }] })).body,
    ).toEqual({ success: true });
    const f = ((await call('GET', '/index/i')).body as { fields: { name: string; options: { type: string } }[] })
      .fields;
    expect(f.map((x) => [x.name, x.options.type])).toEqual([
      ['f', 'set'],
      ['price', 'int'],
    ]);
  });

  it('POST /schema copies a schema (204) and deletes work', async () => {
    server = await startServer();
    await call('POST', '/index/i', { options: { keys: true } });
    await call('POST', '/index/i/field/t', { options: { type: 'time', timeQuantum: 'YM' } });
    await call('POST', '/index/i/field/n', { options: { type: 'int', min: 5, max: 50 } });
    const schema = (await call('GET', '/schema')).raw;
    const first = server.dataDir;
    await server.close();
    removeDir(first);
    server = await startServer();
    const res = await server.app.inject({ method: 'POST', url: '/schema', payload: schema });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await call('GET', '/schema')).raw).toBe(schema);
    expect((await call('DELETE', '/index/i/field/t')).body).toEqual({ success: true });
    expect((await call('DELETE', '/index/i')).body).toEqual({ success: true });
    expect((await call('GET', '/schema')).body).toEqual({ indexes: null });
  });

  it('status, version, info and recalculate-caches', async () => {
    server = await startServer();
    const port = await server.listen();
    const status = (await call('GET', '/status')).body as {
      state: string;
      localID: string;
      nodes: { id: string; isCoordinator: boolean; uri: { scheme: string; host: string; port: number } }[];
    };
    expect(status.state).toBe('NORMAL');
    expect(status.nodes).toHaveLength(1);
    expect(status.nodes[0]).toMatchObject({
      id: status.localID,
      isCoordinator: true,
      uri: { scheme: 'http', host: '127.0.0.1', port },
    });
    // The uri is where the server really answers.
    const viaUri = await fetch(`http://${status.nodes[0].uri.host}:${status.nodes[0].uri.port}/version`);
    expect(viaUri.status).toBe(200);
    const version = (await call('GET', '/version')).body as { version: string };
    expect(version.version).toMatch(/^v\d+\.\d+\.\d+$/);
    const info = (await call('GET', '/info')).body as Record<string, number | string>;
    expect(info.shardWidth).toBe(1048576);
    for (const k of ['memory', 'cpuPhysicalCores', 'cpuLogicalCores', 'cpuMHz']) expect(info[k]).toBeGreaterThan(0);
    expect(typeof info.cpuType).toBe('string');
    const rc = await server.app.inject({ method: 'POST', url: '/recalculate-caches' });
    expect(rc.statusCode).toBe(204);
    // The node id is stable across restarts.
    const dataDir = server.dataDir;
    await server.close();
    server = await startServer({ dataDir });
    expect(((await call('GET', '/status')).body as { localID: string }).localID).toBe(status.localID);
  });
});
