// Legacy input definitions (0.5–0.9, docs/API.md §6.5) over inject() against a real server: define
// (creating frames), read, delete, ingest with every action, validation messages, durability.
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer, stopServer } from '../helpers/server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await stopServer(server);
  server = undefined;
});

type Method = 'GET' | 'POST' | 'DELETE';

async function call(method: Method, url: string, body?: unknown) {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const res = await server!.app.inject({ method, url, payload });
  return {
    status: res.statusCode,
    body: res.body === '' ? undefined : (JSON.parse(res.body) as unknown),
    raw: res.body,
  };
}

const bits = async (q: string): Promise<unknown> =>
  ((await call('POST', '/index/i/query', q)).body as { results: unknown[] }).results;
const errorOf = (r: { body: unknown }): string => (r.body as { error: { message: string } }).error.message;

// The 0.5 docs' example, with the docs' lowercase `rowid`.
const DEF = {
  frames: [
    { name: 'event', options: { timeQuantum: 'YMD' } },
    { name: 'color', options: { cacheType: 'ranked' } },
    { name: 'flags' },
  ],
  fields: [
    { name: 'columnID', primaryKey: true },
    { name: 'ts', actions: [{ frame: 'event', valueDestination: 'set-timestamp' }] },
    { name: 'kind', actions: [{ frame: 'event', valueDestination: 'mapping', valueMap: { click: 1, view: 2 } }] },
    { name: 'color', actions: [{ frame: 'color', valueDestination: 'value-to-row' }] },
    { name: 'vip', actions: [{ frame: 'flags', valueDestination: 'single-row-boolean', rowid: 10 }] },
    { name: 'beta', actions: [{ frame: 'flags', valueDestination: 'single-row-boolean', rowID: 11 }] },
  ],
};

describe('legacy input definitions', () => {
  it('defines, reads, ingests and deletes', async () => {
    server = await startServer();
    await call('POST', '/index/i');
    expect(await call('POST', '/index/i/input-definition/clicks', DEF)).toEqual({ status: 200, body: {}, raw: '{}\n' });
    // Frames were created, with their options.
    const idx = (await call('GET', '/index/i')).body as { fields: { name: string; options: { type: string } }[] };
    expect(idx.fields.map((f) => [f.name, f.options.type])).toEqual([
      ['color', 'set'],
      ['event', 'time'],
      ['flags', 'set'],
    ]);
    // GET answers the definition in canonical form (rowid → rowID).
    const got = (await call('GET', '/index/i/input-definition/clicks')).body as typeof DEF;
    expect(got.frames).toEqual(DEF.frames);
    expect(got.fields[4]).toEqual({
      name: 'vip',
      actions: [{ frame: 'flags', valueDestination: 'single-row-boolean', rowID: 10 }],
    });
    expect(got.fields[0]).toEqual({ name: 'columnID', primaryKey: true });

    const records = [
      { columnID: 1, ts: '2017-01-05T10:00', kind: 'click', color: 3, vip: true, beta: false },
      { columnID: 2.9, kind: 'view', color: 3, vip: null },
      { columnID: 3, kind: 'click', beta: true },
    ];
    expect(await call('POST', '/index/i/input/clicks', records)).toEqual({ status: 200, body: {}, raw: '{}\n' });
    expect(
      await bits(
        'Bitmap(frame=event, row=1) Bitmap(frame=event, row=2) Bitmap(frame=color, row=3) Bitmap(frame=flags, row=10) Bitmap(frame=flags, row=11)',
      ),
    ).toEqual([
      { attrs: {}, bits: [1, 3] },
      { attrs: {}, bits: [2] },
      { attrs: {}, bits: [1, 2] },
      { attrs: {}, bits: [1] },
      { attrs: {}, bits: [3] },
    ]);
    // The timestamp went to the event frame's time views for record 1 only.
    expect(await bits('Count(Range(frame=event, row=1, start="2017-01-05T00:00", end="2017-01-06T00:00"))')).toEqual([
      1,
    ]);

    expect((await call('DELETE', '/index/i/input-definition/clicks')).body).toEqual({});
    expect((await call('GET', '/index/i/input-definition/clicks')).status).toBe(404);
    expect((await call('DELETE', '/index/i/input-definition/clicks')).status).toBe(404);
    expect((await call('POST', '/index/i/input/clicks', records)).status).toBe(404);
  });

  it('validates definitions with 0.x messages and creates nothing on error', async () => {
    server = await startServer();
    expect((await call('POST', '/index/nope/input-definition/d', DEF)).status).toBe(404);
    await call('POST', '/index/i');
    const bad = async (def: unknown): Promise<string> => {
      const r = await call('POST', '/index/i/input-definition/d', def);
      expect(r.status).toBe(400);
      return errorOf(r);
    };
    const pk = { name: 'columnID', primaryKey: true };
    const frames = [{ name: 'f' }];
    expect(await bad({ frames })).toBe('frames and fields are required');
    expect(await bad({ frames: [], fields: [pk] })).toBe('frames and fields are required');
    expect(await bad({ frames, fields: [{ name: 'a', actions: [{ frame: 'f', valueDestination: 'x' }] }, pk] })).toBe(
      'invalid ValueDestination: x',
    );
    expect(await bad({ frames, fields: [{ name: 'a', actions: [{ valueDestination: 'mapping' }] }, pk] })).toBe(
      'frame required',
    );
    expect(
      await bad({ frames, fields: [{ name: 'a', actions: [{ frame: 'f', valueDestination: 'mapping' }] }, pk] }),
    ).toBe('valueMap required for map');
    expect(
      await bad({
        frames,
        fields: [{ name: 'a', actions: [{ frame: 'f', valueDestination: 'single-row-boolean' }] }, pk],
      }),
    ).toBe('rowID required for single-row-boolean Field a');
    expect(
      await bad({
        frames,
        fields: [
          pk,
          { name: 'a', actions: [{ frame: 'f', valueDestination: 'single-row-boolean', rowID: 1 }] },
          { name: 'b', actions: [{ frame: 'f', valueDestination: 'single-row-boolean', rowID: 1 }] },
        ],
      }),
    ).toBe('duplicate rowID with other field: 1');
    expect(
      await bad({ frames, fields: [{ name: 'a', actions: [{ frame: 'f', valueDestination: 'value-to-row' }] }] }),
    ).toBe('input-definition must contain one PrimaryKey');
    expect(await bad({ frames, fields: [pk, { ...pk }] })).toBe('input-definition can only contain one PrimaryKey');
    expect(await bad({ frames, fields: [{ name: 'id', primaryKey: true }] })).toBe(
      'PrimaryKey field name does not match columnLabel',
    );
    expect(await bad({ frames, fields: [pk, { name: 'a' }] })).toBe('field definitions require an action');
    expect(
      await bad({ frames, fields: [pk, { name: 'a', actions: [{ frame: 'g', valueDestination: 'value-to-row' }] }] }),
    ).toBe('frame not found: g');
    expect(await bad({ frames: [{ name: 'f', options: { cacheType: 'huge' } }], fields: [pk] })).toMatch(
      /invalid cache type/,
    );
    expect((await call('GET', '/index/i')).body).toMatchObject({ fields: null });

    // The primary key follows the index's 0.5 column label.
    await call('POST', '/index/u', { options: { columnLabel: 'user' } });
    expect(
      (await call('POST', '/index/u/input-definition/d', { frames, fields: [{ name: 'user', primaryKey: true }] }))
        .status,
    ).toBe(200);
    expect(
      (await call('POST', '/index/u/input-definition/d', { frames, fields: [{ name: 'user', primaryKey: true }] }))
        .status,
    ).toBe(409);
  });

  it('refuses bad records atomically, with 0.x messages', async () => {
    server = await startServer();
    await call('POST', '/index/i');
    await call('POST', '/index/i/input-definition/clicks', DEF);
    const bad = async (records: unknown): Promise<string> => {
      const r = await call('POST', '/index/i/input/clicks', records);
      expect(r.status).toBe(400);
      return errorOf(r);
    };
    expect(await bad({ columnID: 1 })).toMatch(/JSON array/);
    expect(await bad([{ columnID: 1, nope: 1 }])).toBe('field not found: nope');
    expect(await bad([{ kind: 'click' }])).toBe('primary key does not exist: columnID');
    expect(await bad([{ columnID: 'x' }])).toMatch(/primary key columnID must be a number/);
    expect(
      await bad([
        { columnID: 1, color: 3 },
        { columnID: 2, kind: 'purchase' },
      ]),
    ).toBe('error handling action: mapping, err: Value purchase does not exist in definition map');
    expect(await bad([{ columnID: 1, vip: 'yes' }])).toMatch(/^error handling action: single-row-boolean, err: /);
    expect(await bad([{ columnID: 1, color: -1 }])).toMatch(/^error handling action: value-to-row, err: /);
    expect(await bad([{ columnID: 1, ts: '2017-13-01T00:00' }])).toMatch(
      /^error handling action: set-timestamp, err: /,
    );
    // The first, valid record of the failed requests set nothing.
    expect(await bits('Count(Bitmap(frame=color, row=3))')).toEqual([0]);
  });

  it('keeps definitions across restarts and drops them with their index', async () => {
    server = await startServer();
    await call('POST', '/index/i');
    await call('POST', '/index/i/input-definition/clicks', DEF);
    for (const viaSnapshot of [false, true]) {
      if (viaSnapshot) await server.engine.snapshot();
      const dataDir = server.dataDir;
      await server.close();
      server = await startServer({ dataDir });
      expect((await call('GET', '/index/i/input-definition/clicks')).body).toMatchObject({ frames: DEF.frames });
    }
    expect((await call('POST', '/index/i/input/clicks', [{ columnID: 5, color: 1 }])).status).toBe(200);
    expect(await bits('Bitmap(frame=color, row=1)')).toEqual([{ attrs: {}, bits: [5] }]);
    await call('DELETE', '/index/i');
    await call('POST', '/index/i');
    expect((await call('GET', '/index/i/input-definition/clicks')).status).toBe(404);
  });
});
