// The legacy (0.5–0.10) frame API over inject() against a real server: frames and their options,
// time quanta, frame int fields, 0.x index options, /hosts, /slices/max, /fragment/nodes, and
// legacy PQL round trips — with the legacy metadata surviving a restart from log and snapshot.
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer, stopServer } from '../helpers/server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await stopServer(server);
  server = undefined;
});

type Method = 'GET' | 'POST' | 'DELETE' | 'PATCH';

async function call(method: Method, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const res = await server!.app.inject({ method, url, payload, headers });
  return {
    status: res.statusCode,
    body: res.body === '' ? undefined : (JSON.parse(res.body) as unknown),
    raw: res.body,
  };
}

const query = async (q: string, args = '') => call('POST', `/index/i/query${args}`, q);
const fieldOptions = async (index: string, field: string): Promise<unknown> => {
  const idx = (await call('GET', `/index/${index}`)).body as { fields: { name: string; options: unknown }[] | null };
  return idx.fields?.find((f) => f.name === field)?.options;
};

async function restart(viaSnapshot: boolean): Promise<void> {
  if (viaSnapshot) await server!.engine.snapshot();
  const dataDir = server!.dataDir;
  await server!.close();
  server = await startServer({ dataDir });
}

describe('legacy frames', () => {
  it('creates frames as fields with their options and answers {} like 0.x', async () => {
    server = await startServer();
    expect((await call('POST', '/index/i')).status).toBe(200);
    expect(await call('POST', '/index/i/frame/plain')).toEqual({ status: 200, body: {}, raw: '{}\n' });
    expect(
      (
        await call('POST', '/index/i/frame/lru', {
          options: { cacheType: 'LRU', cacheSize: 10, inverseEnabled: true, rowLabel: 'user' },
        })
      ).body,
    ).toEqual({});
    expect((await call('POST', '/index/i/frame/timed', { options: { timeQuantum: 'YMD' } })).body).toEqual({});
    expect(
      (
        await call('POST', '/index/i/frame/ranged', {
          options: { rangeEnabled: true, fields: [{ name: 'x', type: 'int', min: -10, max: 1000 }] },
        })
      ).body,
    ).toEqual({});
    // Older examples put rangeEnabled and fields at the top level.
    expect(
      (
        await call('POST', '/index/i/frame/top', {
          rangeEnabled: true,
          fields: [{ name: 'y', type: 'int', min: 0, max: 5 }],
        })
      ).body,
    ).toEqual({});

    expect(await fieldOptions('i', 'plain')).toEqual({
      type: 'set',
      cacheType: 'ranked',
      cacheSize: 50000,
      keys: false,
    });
    expect(await fieldOptions('i', 'lru')).toEqual({ type: 'set', cacheType: 'lru', cacheSize: 10, keys: false });
    expect(await fieldOptions('i', 'timed')).toEqual({
      type: 'time',
      timeQuantum: 'YMD',
      keys: false,
      noStandardView: false,
    });
    expect(await fieldOptions('i', 'ranged')).toEqual({
      type: 'set',
      cacheType: 'ranked',
      cacheSize: 50000,
      keys: false,
    });
    expect(await fieldOptions('i', 'ranged_x')).toEqual({
      type: 'int',
      base: 0,
      bitDepth: 0,
      min: -10,
      max: 1000,
      keys: false,
    });
    expect(await fieldOptions('i', 'top_y')).toEqual({
      type: 'int',
      base: 0,
      bitDepth: 0,
      min: 0,
      max: 5,
      keys: false,
    });
    expect(await call('GET', '/index/i/frame/ranged/fields')).toMatchObject({
      status: 200,
      body: { fields: [{ name: 'x', type: 'int', min: -10, max: 1000 }] },
    });
    expect((await call('GET', '/index/i/frame/plain/fields')).body).toEqual({ fields: [] });
  });

  it('refuses bad frames and handles deletes like 0.x', async () => {
    server = await startServer();
    expect((await call('POST', '/index/nope/frame/f')).status).toBe(404);
    await call('POST', '/index/i');
    await call('POST', '/index/i/frame/f');
    expect((await call('POST', '/index/i/frame/f')).status).toBe(409);
    expect((await call('POST', '/index/i/frame/Bad')).status).toBe(400);
    expect((await call('POST', '/index/i/frame/g', { options: { cacheType: 'big' } })).status).toBe(400);
    expect((await call('POST', '/index/i/frame/g', { options: { timeQuantum: 'YQ' } })).status).toBe(400);
    expect((await call('POST', '/index/i/frame/g', { options: { nope: 1 } })).status).toBe(400);
    expect((await call('POST', '/index/i/frame/g', { options: { rowLabel: '9x' } })).status).toBe(400);
    expect((await call('POST', '/index/i/frame/g', { options: { rowLabel: 'columnID' } })).status).toBe(400);
    expect(
      (await call('POST', '/index/i/frame/g', { options: { fields: [{ name: 'x', type: 'int', min: 5, max: 1 }] } }))
        .status,
    ).toBe(400);
    expect((await call('POST', '/index/i/frame/g', { options: { fields: [{ name: 'x', type: 'set' }] } })).status).toBe(
      400,
    );
    expect((await call('GET', '/index/i')).body).toMatchObject({ fields: [{ name: 'f' }] }); // nothing half-created

    await call('POST', '/index/i/frame/r', { options: { fields: [{ name: 'x', type: 'int', min: 0, max: 9 }] } });
    expect(await call('DELETE', '/index/i/frame/r')).toEqual({ status: 200, body: {}, raw: '{}\n' });
    expect(await fieldOptions('i', 'r_x')).toBeUndefined(); // its int fields go with it
    expect((await call('DELETE', '/index/i/frame/never')).body).toEqual({}); // 0.x ignored missing frames
    expect((await call('DELETE', '/index/nope/frame/f')).status).toBe(404);
    // A re-created frame starts from fresh options.
    expect((await call('POST', '/index/i/frame/r', { options: { timeQuantum: 'Y' } })).status).toBe(200);
    expect(await call('GET', '/index/i/frame/r/fields')).toMatchObject({ body: { fields: [] } });
  });

  it('manages frame int fields through /field/{name}', async () => {
    server = await startServer();
    await call('POST', '/index/i');
    await call('POST', '/index/i/frame/f');
    expect(await call('POST', '/index/i/frame/f/field/n', { type: 'int', min: 0, max: 100 })).toEqual({
      status: 200,
      body: {},
      raw: '{}\n',
    });
    expect((await call('POST', '/index/i/frame/f/field/n', { type: 'int', min: 0, max: 100 })).status).toBe(409);
    expect((await call('POST', '/index/i/frame/f/field/m', { type: 'int', min: 0 })).status).toBe(400);
    expect((await call('POST', '/index/i/frame/f/field/m', { type: 'string', min: 0, max: 1 })).status).toBe(400);
    expect((await call('POST', '/index/i/frame/nope/field/m', { type: 'int', min: 0, max: 1 })).status).toBe(404);
    expect(await fieldOptions('i', 'f_n')).toMatchObject({ type: 'int', min: 0, max: 100 });
    expect((await call('GET', '/index/i/frame/f/fields')).body).toEqual({
      fields: [{ name: 'n', type: 'int', min: 0, max: 100 }],
    });
    expect((await call('GET', '/index/i/frame/nope/fields')).status).toBe(404);
    expect((await call('DELETE', '/index/i/frame/f/field/n')).body).toEqual({});
    expect((await call('DELETE', '/index/i/frame/f/field/n')).status).toBe(404);
    expect((await call('GET', '/index/i/frame/f/fields')).body).toEqual({ fields: [] });
    expect(await fieldOptions('i', 'f_n')).toBeUndefined();
  });

  it("sets time quanta: the index default for later frames, and a frame's own while it is empty", async () => {
    server = await startServer();
    await call('POST', '/index/i');
    expect(await call('PATCH', '/index/i/time-quantum', { timeQuantum: 'YM' })).toEqual({
      status: 200,
      body: {},
      raw: '{}\n',
    });
    await call('POST', '/index/i/frame/inherits');
    expect(await fieldOptions('i', 'inherits')).toMatchObject({ type: 'time', timeQuantum: 'YM' });
    await call('POST', '/index/i/frame/own', { options: { timeQuantum: 'D' } });
    expect(await fieldOptions('i', 'own')).toMatchObject({ type: 'time', timeQuantum: 'D' });
    // The 0.x docs' examples use POST.
    expect((await call('POST', '/index/i/time-quantum', { timeQuantum: '' })).status).toBe(200);
    await call('POST', '/index/i/frame/plain');
    expect(await fieldOptions('i', 'plain')).toMatchObject({ type: 'set' });

    expect((await call('PATCH', '/index/i/frame/plain/time-quantum', { timeQuantum: 'YMDH' })).body).toEqual({});
    expect(await fieldOptions('i', 'plain')).toMatchObject({ type: 'time', timeQuantum: 'YMDH' });
    expect((await call('POST', '/index/i/frame/plain/time-quantum', { timeQuantum: '' })).body).toEqual({});
    expect(await fieldOptions('i', 'plain')).toMatchObject({ type: 'set' });

    await query('SetBit(frame=own, row=1, col=1)');
    expect((await call('PATCH', '/index/i/frame/own/time-quantum', { timeQuantum: 'Y' })).status).toBe(400);
    expect((await call('PATCH', '/index/i/frame/own/time-quantum', { timeQuantum: 'D' })).status).toBe(200); // unchanged: fine
    expect((await call('PATCH', '/index/i/time-quantum', { timeQuantum: 'Q' })).status).toBe(400);
    expect((await call('PATCH', '/index/i/time-quantum', {})).status).toBe(400);
    expect((await call('PATCH', '/index/nope/time-quantum', { timeQuantum: 'Y' })).status).toBe(404);
    expect((await call('PATCH', '/index/i/frame/nope/time-quantum', { timeQuantum: 'Y' })).status).toBe(404);
  });

  it('accepts 0.x index options (columnLabel, timeQuantum) on POST /index/{i}', async () => {
    server = await startServer();
    expect(await call('POST', '/index/i', { options: { columnLabel: 'user', timeQuantum: 'YMD' } })).toEqual({
      status: 200,
      body: {},
      raw: '{}\n',
    });
    expect((await call('GET', '/index/i')).body).toMatchObject({
      name: 'i',
      options: { keys: false, trackExistence: true },
    });
    await call('POST', '/index/i/frame/f');
    expect(await fieldOptions('i', 'f')).toMatchObject({ type: 'time', timeQuantum: 'YMD' });
    expect((await query('SetBit(frame=f, rowID=1, user=5) Bitmap(frame=f, rowID=1)')).body).toEqual({
      results: [true, { attrs: {}, bits: [5] }],
    });
    expect((await call('POST', '/index/i', { options: { columnLabel: 'user' } })).status).toBe(409);
    expect((await call('POST', '/index/j', { options: { columnLabel: '1bad' } })).status).toBe(400);
    expect((await call('POST', '/index/j', { options: { timeQuantum: 'bad' } })).status).toBe(400);
    // Current bodies still reach the current handler.
    expect((await call('POST', '/index/j', { options: { keys: true } })).body).toEqual({ success: true });
  });
});

describe('legacy cluster routes', () => {
  it('lists hosts, fragment nodes and max slices in shapes every 0.x client reads', async () => {
    server = await startServer();
    const hosts = (await call('GET', '/hosts')).body as Record<string, unknown>[];
    expect(hosts).toHaveLength(1);
    expect(hosts[0]).toMatchObject({
      scheme: 'http',
      internalHost: '',
      isCoordinator: true,
      uri: { scheme: 'http', host: '127.0.0.1' },
    });
    expect(hosts[0].host).toMatch(/^127\.0\.0\.1:\d+$/);
    expect((await call('GET', '/fragment/nodes?index=i&slice=0')).body).toEqual(hosts);
    expect((await call('GET', '/fragment/nodes?index=i')).body).toEqual({ error: 'slice is required' });

    expect((await call('GET', '/slices/max')).body).toEqual({ standard: {}, inverse: {}, maxSlices: {} });
    await call('POST', '/index/i');
    await call('POST', '/index/e');
    await call('POST', '/index/i/frame/f');
    await query(`SetBit(frame=f, row=1, col=${2 * 1048576})`);
    expect((await call('GET', '/slices/max')).body).toEqual({
      standard: { e: 0, i: 2 },
      inverse: { e: 0, i: 0 },
      maxSlices: { e: 0, i: 2 },
    });
    expect((await call('GET', '/slices/max?inverse=true')).body).toMatchObject({ maxSlices: { e: 0, i: 0 } });
    // 0.5–0.8 protobuf MaxSlicesResponse: map entries {1: key, 2: value}.
    const proto = await server.app.inject({
      method: 'GET',
      url: '/slices/max',
      headers: { accept: 'application/x-protobuf' },
    });
    expect([...proto.rawPayload]).toEqual([
      0x0a, 0x05, 0x0a, 0x01, 0x65, 0x10, 0x00, 0x0a, 0x05, 0x0a, 0x01, 0x69, 0x10, 0x02,
    ]);
  });
});

describe('legacy PQL', () => {
  it('round-trips SetBit and Bitmap with a `bits` answer', async () => {
    server = await startServer();
    await call('POST', '/index/i');
    await call('POST', '/index/i/frame/f');
    expect((await query('SetBit(frame=f, row=1, col=2)')).raw).toBe('{"results":[true]}\n');
    expect((await query('Bitmap(frame=f, row=1)')).raw).toBe('{"results":[{"attrs":{},"bits":[2]}]}\n');
    // 0.7/0.8 argument names, the 0.5 docs' `id`, and the default frame `general`.
    await call('POST', '/index/i/frame/general');
    expect((await query('SetBit(rowID=3, columnID=4) SetBit(frame=general, row=3, col=5)')).body).toEqual({
      results: [true, true],
    });
    expect((await query('Bitmap(id=3)')).body).toEqual({ results: [{ attrs: {}, bits: [4, 5] }] });
    expect((await query('ClearBit(frame=general, rowID=3, columnID=4) Count(Bitmap(row=3))')).body).toEqual({
      results: [true, 1],
    });
    expect((await query('Bitmap(frame=f, row=1)', '?slices=0')).body).toEqual({ results: [{ attrs: {}, bits: [2] }] });
    expect((await query('Bitmap(frame=f, row=1)', '?slices=1')).body).toEqual({ results: [{ attrs: {}, bits: [] }] });
  });

  it('runs set operations, attributes, TopN, time ranges and int fields', async () => {
    server = await startServer();
    await call('POST', '/index/i');
    await call('POST', '/index/i/frame/f');
    await call('POST', '/index/i/frame/t', { options: { timeQuantum: 'YMD' } });
    await call('POST', '/index/i/frame/v', { options: { fields: [{ name: 'x', type: 'int', min: 0, max: 1000 }] } });

    await query(
      'SetBit(frame=f, row=1, col=1) SetBit(frame=f, row=1, col=2) SetBit(frame=f, row=2, col=2) SetBit(frame=f, row=2, col=3) SetBit(frame=f, row=2, col=4)',
    );
    expect((await query('Union(Bitmap(frame=f, row=1), Bitmap(frame=f, row=2))')).body).toEqual({
      results: [{ attrs: {}, bits: [1, 2, 3, 4] }],
    });
    expect((await query('Intersect(Bitmap(frame=f, row=1), Bitmap(frame=f, row=2))')).body).toEqual({
      results: [{ attrs: {}, bits: [2] }],
    });
    expect((await query('Count(Difference(Bitmap(frame=f, row=2), Bitmap(frame=f, row=1)))')).body).toEqual({
      results: [2],
    });

    expect((await query('SetRowAttrs(frame=f, row=1, color="red", n=3)')).body).toEqual({ results: [null] });
    expect((await query('SetColumnAttrs(col=2, name="two")')).body).toEqual({ results: [null] });
    expect((await query('Bitmap(frame=f, row=1)', '?columnAttrs=true')).body).toEqual({
      results: [{ attrs: { color: 'red', n: 3 }, bits: [1, 2] }],
      columnAttrs: [{ id: 2, attrs: { name: 'two' } }],
    });
    expect((await query('Bitmap(frame=f, row=1)', '?excludeAttrs=true&excludeBits=true')).body).toEqual({
      results: [{ attrs: {}, bits: [] }],
    });

    await call('POST', '/recalculate-caches');
    expect((await query('TopN(frame=f, n=1)')).body).toEqual({ results: [[{ id: 2, count: 3 }]] });
    expect((await query('TopN(Bitmap(frame=f, row=1), frame=f, n=2)')).body).toEqual({
      results: [
        [
          { id: 1, count: 2 },
          { id: 2, count: 1 },
        ],
      ],
    });

    await query(
      'SetBit(frame=t, row=1, col=10, timestamp="2017-01-05T00:00") SetBit(frame=t, row=1, col=11, timestamp="2017-03-05T00:00")',
    );
    expect((await query('Range(frame=t, row=1, start="2017-01-01T00:00", end="2017-02-01T00:00")')).body).toMatchObject(
      { results: [{ attrs: {} }] },
    );
    const range = (await query('Count(Range(frame=t, row=1, start="2017-01-01T00:00", end="2017-02-01T00:00"))')).body;
    expect(range).toEqual({ results: [1] });

    expect(
      (
        await query(
          'SetFieldValue(frame=v, col=1, x=10) SetFieldValue(frame=v, col=2, x=20) SetFieldValue(frame=v, col=3, x=30)',
        )
      ).status,
    ).toBe(200);
    expect((await query('Count(Range(frame=v, x > 15))')).body).toEqual({ results: [2] });
    expect((await query('Count(Range(frame=v, x >< [10, 20]))')).body).toEqual({ results: [2] });
    const sum = (await query('Sum(Bitmap(frame=f, row=2), frame=v, field=x)')).body as {
      results: Record<string, number>[];
    };
    expect(Object.values(sum.results[0])).toEqual([50, 2]); // {sum|value, count}: the name is the encoder's choice
    // The same int field through the current API: `<frame>_<field>`.
    expect((await call('POST', '/index/i/query', 'Count(Row(v_x >= 20))')).body).toEqual({ results: [2] });
  });

  it('uses 0.5–0.8 row labels and keeps all legacy metadata across restarts (log and snapshot)', async () => {
    server = await startServer();
    await call('POST', '/index/i', { options: { columnLabel: 'user' } });
    await call('PATCH', '/index/i/time-quantum', { timeQuantum: 'Y' });
    await call('POST', '/index/i/frame/f', { options: { rowLabel: 'item' } });
    await call('POST', '/index/i/frame/v', { options: { fields: [{ name: 'x', type: 'int', min: 0, max: 9 }] } });
    await query('SetBit(frame=f, item=1, user=7) SetFieldValue(frame=v, user=7, x=4)');
    for (const viaSnapshot of [false, true]) {
      await restart(viaSnapshot);
      expect((await query('Bitmap(frame=f, item=1) Count(Range(frame=v, x == 4))')).body).toEqual({
        results: [{ attrs: {}, bits: [7] }, 1],
      });
      expect((await call('GET', '/index/i/frame/v/fields')).body).toEqual({
        fields: [{ name: 'x', type: 'int', min: 0, max: 9 }],
      });
      await call('DELETE', '/index/i/frame/g');
      await call('POST', '/index/i/frame/g');
      expect(await fieldOptions('i', 'g')).toMatchObject({ type: 'time', timeQuantum: 'Y' });
    }
  });

  it("answers legacy errors with Pilosa's query error shape (400, 404 for unknown names)", async () => {
    server = await startServer();
    await call('POST', '/index/i');
    await call('POST', '/index/i/frame/f');
    const r = await query('Bitmap(frame=f)');
    expect(r.status).toBe(400);
    expect((r.body as { error: string }).error).toMatch(/^executing: Bitmap\(\) requires a row argument/);
    expect((await query('Bitmap(frame=f, col=1)')).status).toBe(400);
    // Unknown frame or index: 404 (bitledger names these right; Pilosa answered 400).
    expect((await query('Bitmap(frame=nope, row=1)')).status).toBe(404);
    expect((await call('POST', '/index/nope/query', 'Bitmap(frame=f, row=1)')).status).toBe(404);
  });
});
