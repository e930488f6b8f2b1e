// The 0.x frame API edges: the 0.7 getting-started sequence (time-quantum index, TopN on its
// frame), Min/Max/Sum answer shapes, and --legacy-release: each release's row-argument name,
// endpoints, listing shapes and empty-object answers.
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/config.js';
import { startServer, stopServer, type TestServer } from '../helpers/server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await stopServer(server);
  server = undefined;
});

async function start(overrides: Partial<Config> = {}): Promise<TestServer> {
  server = await startServer(overrides);
  return server;
}

async function req(s: TestServer, method: 'GET' | 'POST' | 'DELETE' | 'PATCH', url: string, payload?: string) {
  const r = await s.app.inject({ method, url, payload });
  return { status: r.statusCode, body: r.body, json: () => JSON.parse(r.body) as unknown };
}

async function gettingStarted(s: TestServer, rowArg = 'rowID'): Promise<void> {
  expect((await req(s, 'POST', '/index/l07', '{"options":{"timeQuantum":"YMDH"}}')).status).toBe(200);
  expect((await req(s, 'POST', '/index/l07/frame/language', '{"options":{"cacheType":"ranked"}}')).status).toBe(200);
  expect((await req(s, 'POST', '/index/l07/frame/stargazer')).status).toBe(200);
  const w = await req(
    s,
    'POST',
    '/index/l07/query',
    [
      `SetBit(frame="language", ${rowArg}=5, columnID=10)`,
      `SetBit(frame="language", ${rowArg}=5, columnID=11)`,
      `SetBit(frame="language", ${rowArg}=6, columnID=11, timestamp="2017-01-01T00:00")`,
      `SetBit(frame="stargazer", ${rowArg}=1, columnID=10, timestamp="2017-05-18T00:00")`,
    ].join(' '),
  );
  expect(w.status, w.body).toBe(200);
}

describe('0.7 getting started (no --legacy-release)', () => {
  it('time frames keep a ranked cache: TopN works, also after a restart', async () => {
    const s = await start();
    await gettingStarted(s);
    const top = await req(
      s,
      'POST',
      '/index/l07/query',
      'TopN(frame="language", n=5) TopN(frame="stargazer", n=5) Bitmap(frame="language", rowID=5)',
    );
    expect(top.status, top.body).toBe(200);
    expect(top.json()).toEqual({
      results: [
        [
          { id: 5, count: 2 },
          { id: 6, count: 1 },
        ],
        [{ id: 1, count: 1 }],
        { attrs: {}, bits: [10, 11] },
      ],
    });
    // cacheType none is honoured: no TopN, as in 0.x.
    expect((await req(s, 'POST', '/index/l07/frame/nocache', '{"options":{"cacheType":"none"}}')).status).toBe(200);
    expect((await req(s, 'POST', '/index/l07/query', 'TopN(frame="nocache")')).status).toBe(400);

    const dir = s.dataDir;
    await s.close();
    server = await startServer({ dataDir: dir });
    const again = await req(server, 'POST', '/index/l07/query', 'TopN(frame="language", n=1)');
    expect(again.json()).toEqual({ results: [[{ id: 5, count: 2 }]] });
  });

  it('cacheSize is honoured on time frames', async () => {
    const s = await start();
    expect((await req(s, 'POST', '/index/t', '{"options":{"timeQuantum":"YM"}}')).status).toBe(200);
    expect((await req(s, 'POST', '/index/t/frame/f', '{"options":{"cacheSize":2}}')).status).toBe(200);
    const f = s.engine.peekApplied((h) => h.index('t')?.field('f')?.options);
    expect(f).toMatchObject({ type: 'time', timeQuantum: 'YM', cacheType: 'ranked', cacheSize: 2 });
  });

  it('Min and Max answer value, Sum answers sum', async () => {
    const s = await start();
    expect((await req(s, 'POST', '/index/m')).status).toBe(200);
    expect(
      (await req(s, 'POST', '/index/m/frame/f', '{"options":{"fields":[{"name":"n","type":"int","min":0,"max":100}]}}'))
        .status,
    ).toBe(200);
    expect(
      (
        await req(
          s,
          'POST',
          '/index/m/query',
          'SetFieldValue(frame="f", columnID=1, n=5) SetFieldValue(frame="f", columnID=2, n=7)',
        )
      ).status,
    ).toBe(200);
    const r = await req(
      s,
      'POST',
      '/index/m/query',
      'Min(frame="f", field="n") Max(frame="f", field="n") Sum(frame="f", field="n")',
    );
    expect(r.json()).toEqual({
      results: [
        { value: 5, count: 1 },
        { value: 7, count: 1 },
        { sum: 12, count: 2 },
      ],
    });
  });

  it('keeps the 1.x listing shapes and accepts every row spelling', async () => {
    const s = await start();
    await gettingStarted(s);
    expect(await req(s, 'GET', '/index/l07').then((r) => r.json())).toMatchObject({
      name: 'l07',
      fields: expect.any(Array),
    });
    const r = await req(
      s,
      'POST',
      '/index/l07/query',
      'Count(Bitmap(frame="language", id=5)) Count(Bitmap(frame="language", rowID=5)) Count(Bitmap(frame="language", row=5))',
    );
    expect(r.json()).toEqual({ results: [2, 2, 2] });
  });
});

describe('--legacy-release', () => {
  const releases: {
    release: Config['legacyRelease'];
    row: string;
    minMax: boolean;
    inputs: boolean;
    quantum: boolean;
    hosts: boolean;
    recalc: boolean;
  }[] = [
    { release: '0.5', row: 'id', minMax: false, inputs: true, quantum: true, hosts: true, recalc: false },
    { release: '0.6', row: 'rowID', minMax: false, inputs: true, quantum: true, hosts: true, recalc: false },
    { release: '0.7', row: 'rowID', minMax: false, inputs: true, quantum: true, hosts: true, recalc: false },
    { release: '0.8', row: 'rowID', minMax: false, inputs: true, quantum: true, hosts: true, recalc: true },
    { release: '0.9', row: 'row', minMax: true, inputs: false, quantum: false, hosts: true, recalc: true },
    { release: '0.10', row: 'row', minMax: true, inputs: false, quantum: false, hosts: false, recalc: true },
  ];
  it.each(releases)('answers as release $release', async (r) => {
    const s = await start({ legacyRelease: r.release });
    await gettingStarted(s, r.row);
    // Row argument: the release's name works, the others are refused naming it.
    const ok = await req(
      s,
      'POST',
      '/index/l07/query',
      `Bitmap(frame="language", ${r.row}=5) TopN(frame="language", n=5)`,
    );
    expect(ok.json()).toEqual({
      results: [
        { attrs: {}, bits: [10, 11] },
        [
          { id: 5, count: 2 },
          { id: 6, count: 1 },
        ],
      ],
    });
    for (const other of ['id', 'rowID', 'row'].filter((x) => x !== r.row)) {
      const bad = await req(s, 'POST', '/index/l07/query', `Bitmap(frame="language", ${other}=5)`);
      expect(bad.status).toBe(400);
      expect(bad.json()).toEqual({
        error: `executing: Bitmap(): the row argument is named ${r.row} in release ${r.release} (--legacy-release), not ${other}`,
      });
      // A time-travel read is held to the same spellings.
      const past = await req(s, 'POST', '/index/l07/query?atSeq=1', `Bitmap(frame="language", ${other}=5)`);
      expect(past.status).toBe(400);
      expect(past.json()).toEqual(bad.json());
    }
    // Listing shapes of 0.x.
    expect((await req(s, 'GET', '/index/l07')).json()).toEqual({
      index: { name: 'l07' },
      frames: [{ name: 'language' }, { name: 'stargazer' }],
    });
    expect((await req(s, 'GET', '/schema')).json()).toEqual({
      indexes: [{ name: 'l07', frames: [{ name: 'language' }, { name: 'stargazer' }] }],
    });
    expect((await req(s, 'GET', '/index')).json()).toEqual({
      indexes: [{ name: 'l07', frames: [{ name: 'language' }, { name: 'stargazer' }] }],
    });
    expect((await req(s, 'GET', '/index/nope')).status).toBe(404);
    // Mutating endpoints answer {}.
    const created = await req(s, 'POST', '/index/other');
    expect({ status: created.status, body: created.body }).toEqual({ status: 200, body: '{}\n' });
    expect((await req(s, 'DELETE', '/index/other')).body).toBe('{}\n');
    // Min/Max: from 0.9 on, answering value.
    expect(
      (
        await req(
          s,
          'POST',
          '/index/l07/frame/stars',
          '{"options":{"fields":[{"name":"n","type":"int","min":0,"max":10}]}}',
        )
      ).status,
    ).toBe(200);
    expect((await req(s, 'POST', '/index/l07/query', 'SetFieldValue(frame="stars", columnID=3, n=4)')).status).toBe(
      200,
    );
    const mm = await req(s, 'POST', '/index/l07/query', 'Max(frame="stars", field="n")');
    if (r.minMax) expect(mm.json()).toEqual({ results: [{ value: 4, count: 1 }] });
    else
      expect(mm.json()).toEqual({
        error: `executing: Max() does not exist in release ${r.release} (--legacy-release); it came with 0.9`,
      });
    // Endpoints the release lacks are 404.
    const input = await req(s, 'GET', '/index/l07/input-definition/x');
    expect(input.status === 404 && /has no input-definitions endpoint/.test(input.body)).toBe(!r.inputs);
    const tq = await req(s, 'PATCH', '/index/l07/frame/language/time-quantum', '{"timeQuantum":"YM"}');
    expect(tq.status === 404 && /has no time-quantum endpoint/.test(tq.body)).toBe(!r.quantum);
    expect((await req(s, 'GET', '/hosts')).status).toBe(r.hosts ? 200 : 404);
    expect((await req(s, 'POST', '/recalculate-caches')).status).toBe(r.recalc ? 204 : 404);
  });
});

describe('inverse views (inverseEnabled frames)', () => {
  it('Bitmap(frame, columnID) answers the frame rows of that column, through ClearBit and a restart', async () => {
    const s = await start();
    expect((await req(s, 'POST', '/index/inv')).status).toBe(200);
    expect((await req(s, 'POST', '/index/inv/frame/likes', '{"options":{"inverseEnabled":true}}')).status).toBe(200);
    expect((await req(s, 'POST', '/index/inv/frame/plain')).status).toBe(200);
    const big = 3 * 1048576 + 5; // a row in another shard than its columns
    const w = await req(
      s,
      'POST',
      '/index/inv/query',
      `SetBit(frame="likes", rowID=1, columnID=10) SetBit(frame="likes", rowID=2, columnID=10) SetBit(frame="likes", rowID=${big}, columnID=10) SetBit(frame="likes", rowID=2, columnID=11) SetBit(frame="plain", rowID=1, columnID=10)`,
    );
    expect(w.json()).toEqual({ results: [true, true, true, true, true] });
    const read = async (t: TestServer) =>
      (
        await req(
          t,
          'POST',
          '/index/inv/query',
          'Bitmap(frame="likes", columnID=10) Bitmap(frame="likes", columnID=11) Bitmap(frame="likes", rowID=2) Count(Bitmap(frame="likes", columnID=10))',
        )
      ).json();
    expect(await read(s)).toEqual({
      results: [{ attrs: {}, bits: [1, 2, big] }, { attrs: {}, bits: [2] }, { attrs: {}, bits: [10, 11] }, 3],
    });
    // ClearBit clears the transposed bit too.
    expect((await req(s, 'POST', '/index/inv/query', 'ClearBit(frame="likes", rowID=2, columnID=10)')).json()).toEqual({
      results: [true],
    });
    const after = { results: [{ attrs: {}, bits: [1, big] }, { attrs: {}, bits: [2] }, { attrs: {}, bits: [11] }, 2] };
    expect(await read(s)).toEqual(after);
    // TopN(inverse=true) ranks columns by how many rows they have.
    expect(
      (
        await req(s, 'POST', '/index/inv/query', 'TopN(frame="likes", inverse=true, n=5) TopN(frame="likes", n=5)')
      ).json(),
    ).toEqual({
      results: [
        [
          { id: 10, count: 2 },
          { id: 11, count: 1 },
        ],
        [
          { id: 1, count: 1 },
          { id: 2, count: 1 },
          { id: big, count: 1 },
        ],
      ],
    });
    // A frame without an inverse view says so.
    const bad = await req(s, 'POST', '/index/inv/query', 'Bitmap(frame="plain", columnID=10)');
    expect(bad.status).toBe(400);
    expect(bad.json()).toEqual({
      error:
        'executing: Bitmap(): frame plain has no inverse view (create it with "inverseEnabled": true) to query by column',
    });
    expect((await req(s, 'POST', '/index/inv/query', 'TopN(frame="plain", inverse=true)')).json()).toEqual({
      error: 'executing: TopN(): frame plain has no inverse view (create it with "inverseEnabled": true)',
    });
    // The inverse view's shards (rows) count apart from the columns' shards.
    expect((await req(s, 'GET', '/slices/max')).json()).toMatchObject({ standard: { inv: 0 }, inverse: { inv: 3 } });
    expect((await req(s, 'GET', '/internal/shards/max')).json()).toEqual({ standard: { inv: 0 } });
    // Replay reproduces the inverse view from the log.
    const dir = s.dataDir;
    await s.close();
    server = await startServer({ dataDir: dir });
    expect(await read(server)).toEqual(after);
  });
});
