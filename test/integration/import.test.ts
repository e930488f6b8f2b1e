// Bulk import end to end (inject() against a real server and LevelDB): every body form and field
// type, time views from timestamps, clear=true, keys, import-roaring, and each bad-input rule with
// its message and unchanged state.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  encodeImportRequest,
  encodeImportValueRequest,
  type ImportRequestInput,
  type ImportValueRequestInput,
} from '../../src/encoding/import-request-encode.js';
import { encodeImportRoaringRequest } from '../../src/encoding/public-proto.js';
import { encodePilosaRoaring } from '../../src/roaring/pilosa-roaring.js';
import { type Bitmap, RoaringBitmap32 } from '../../src/roaring/bitmap.js';
import { removeDir, startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const PB = { 'content-type': 'application/x-protobuf', accept: 'application/x-protobuf' };

async function req(
  method: 'GET' | 'POST',
  url: string,
  payload?: string | Buffer | Uint8Array,
  headers: Record<string, string> = {},
) {
  const res = await server.app.inject({
    method,
    url,
    payload: payload instanceof Uint8Array && !Buffer.isBuffer(payload) ? Buffer.from(payload) : payload,
    headers,
  });
  return { status: res.statusCode, body: res.body };
}
const importBits = (index: string, field: string, r: ImportRequestInput, qs = '') =>
  req('POST', `/index/${index}/field/${field}/import${qs}`, encodeImportRequest(r), PB);
const importValues = (index: string, field: string, r: ImportValueRequestInput, qs = '') =>
  req('POST', `/index/${index}/field/${field}/import${qs}`, encodeImportValueRequest(r), PB);

async function query(index: string, pql: string): Promise<unknown[]> {
  const r = await req('POST', `/index/${index}/query`, pql);
  expect(r.status, r.body).toBe(200);
  return (JSON.parse(r.body) as { results: unknown[] }).results;
}

beforeAll(async () => {
  server = await startServer();
  for (const [u, b] of [
    ['/index/i', ''],
    ['/index/i/field/f', ''],
    ['/index/i/field/m', '{"options":{"type":"mutex"}}'],
    ['/index/i/field/b', '{"options":{"type":"bool"}}'],
    ['/index/i/field/n', '{"options":{"type":"int","min":-1000,"max":1000}}'],
    ['/index/i/field/t', '{"options":{"type":"time","timeQuantum":"YMD"}}'],
    ['/index/k', '{"options":{"keys":true}}'],
    ['/index/k/field/f', '{"options":{"keys":true}}'],
    ['/index/k/field/n', '{"options":{"type":"int"}}'],
  ] as const)
    expect((await req('POST', u, b)).status).toBe(200);
});
afterAll(async () => {
  await server.close();
  removeDir(server.dataDir);
});

describe('import', () => {
  it('imports protobuf bits into a set field (200, empty body) and clears them with clear=true', async () => {
    const r = await importBits('i', 'f', {
      index: 'i',
      field: 'f',
      shard: 0,
      rowIds: [1, 1, 2, 1],
      columnIds: [10, 20, 30, 5],
    });
    expect(r).toEqual({ status: 200, body: '' });
    expect(await query('i', 'Row(f=1)Row(f=2)')).toEqual([
      { attrs: {}, columns: [5, 10, 20] },
      { attrs: {}, columns: [30] },
    ]);
    expect(
      (await importBits('i', 'f', { index: 'i', field: 'f', shard: 0, rowIds: [1], columnIds: [10] }, '?clear=true'))
        .status,
    ).toBe(200);
    expect(await query('i', 'Row(f=1)')).toEqual([{ attrs: {}, columns: [5, 20] }]);
    // Existence: imported columns count for Not().
    expect(await query('i', 'Count(Not(Row(f=2)))')).toEqual([3]);
  });

  it('imports a shard other than 0', async () => {
    const base = 3 * 1048576;
    expect(
      (
        await importBits('i', 'f', {
          index: 'i',
          field: 'f',
          shard: 3,
          rowIds: [7, 7],
          columnIds: [base + 1, base + 2],
        })
      ).status,
    ).toBe(200);
    expect(await query('i', 'Row(f=7)')).toEqual([{ attrs: {}, columns: [base + 1, base + 2] }]);
  });

  it('accepts the JSON form and answers {"success":true}', async () => {
    const r = await req('POST', '/index/i/field/f/import', JSON.stringify({ rowIDs: [9, 9], columnIDs: [1, 2] }), {
      'content-type': 'application/json',
    });
    expect(r).toEqual({ status: 200, body: '{"success":true}\n' });
    const v = await req('POST', '/index/i/field/n/import', JSON.stringify({ columnIDs: [50], values: [-7] }), {
      'content-type': 'application/json',
    });
    expect(v.status).toBe(200);
    expect(await query('i', 'Row(f=9)Sum(Row(n == -7), field=n)')).toEqual([
      { attrs: {}, columns: [1, 2] },
      { value: -7, count: 1 },
    ]);
  });

  it('mutex: last pair per column wins and the previous row is cleared', async () => {
    expect(
      (await importBits('i', 'm', { index: 'i', field: 'm', shard: 0, rowIds: [1, 2, 3], columnIds: [100, 100, 101] }))
        .status,
    ).toBe(200);
    expect(await query('i', 'Row(m=1)Row(m=2)Row(m=3)')).toEqual([
      { attrs: {}, columns: [] },
      { attrs: {}, columns: [100] },
      { attrs: {}, columns: [101] },
    ]);
    expect(
      (await importBits('i', 'm', { index: 'i', field: 'm', shard: 0, rowIds: [1], columnIds: [101] })).status,
    ).toBe(200);
    expect(await query('i', 'Row(m=1)Row(m=3)')).toEqual([
      { attrs: {}, columns: [101] },
      { attrs: {}, columns: [] },
    ]);
  });

  it('bool: rows 0 and 1, exclusive', async () => {
    expect(
      (await importBits('i', 'b', { index: 'i', field: 'b', shard: 0, rowIds: [1, 0, 1], columnIds: [1, 2, 2] }))
        .status,
    ).toBe(200);
    expect(await query('i', 'Row(b=true)Row(b=false)')).toEqual([
      { attrs: {}, columns: [1, 2] },
      { attrs: {}, columns: [] },
    ]);
  });

  it('time field: timestamps write the quantum views and standard', async () => {
    const ns = (iso: string): bigint => BigInt(Date.parse(iso)) * 1_000_000n;
    const r = await importBits('i', 't', {
      index: 'i',
      field: 't',
      shard: 0,
      rowIds: [1, 1, 1],
      columnIds: [1, 2, 3],
      timestamps: [ns('2018-11-14T15:00:00Z'), ns('2019-01-02T00:00:00Z'), 0n],
    });
    expect(r.status, r.body).toBe(200);
    const views = await server.engine.read((h) => [...h.index('i')!.field('t')!.views.keys()].sort());
    expect(views).toEqual([
      'standard',
      'standard_2018',
      'standard_201811',
      'standard_20181114',
      'standard_2019',
      'standard_201901',
      'standard_20190102',
    ]);
    expect(await query('i', 'Row(t=1)Row(t=1, from=2018-01-01T00:00, to=2019-01-01T00:00)')).toEqual([
      { attrs: {}, columns: [1, 2, 3] },
      { attrs: {}, columns: [1] },
    ]);
  });

  it('int values with ImportValueRequest, out-of-range rejected as a whole', async () => {
    expect(
      (
        await importValues('i', 'n', {
          index: 'i',
          field: 'n',
          shard: 0,
          columnIds: [1, 2, 3],
          values: [10n, -20n, 1000n],
        })
      ).status,
    ).toBe(200);
    expect(await query('i', 'Sum(Row(f=9), field=n)Max(field=n)')).toEqual([
      { value: -10, count: 2 },
      { value: 1000, count: 1 },
    ]);
    const bad = await importValues('i', 'n', {
      index: 'i',
      field: 'n',
      shard: 0,
      columnIds: [4, 5],
      values: [1n, 1001n],
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatch(/value 1001 of item 1 is out of range/);
    expect(await query('i', 'Count(Row(n != null))')).toEqual([4]);
    expect(
      (await importValues('i', 'n', { index: 'i', field: 'n', shard: 0, columnIds: [3] }, '?clear=true')).status,
    ).toBe(200);
    expect(await query('i', 'Max(field=n)')).toEqual([{ value: 10, count: 1 }]);
  });

  it('keys on rows and columns translate in bulk and answer keys', async () => {
    const r = await importBits('k', 'f', {
      index: 'k',
      field: 'f',
      rowKeys: ['red', 'red', 'blue'],
      columnKeys: ['a', 'b', 'a'],
    });
    expect(r.status, r.body).toBe(200);
    expect(await query('k', 'Row(f="red")')).toEqual([{ attrs: {}, columns: [], keys: ['a', 'b'] }]);
    expect(
      (await importValues('k', 'n', { index: 'k', field: 'n', columnKeys: ['b', 'c'], values: [5n, 6n] })).status,
    ).toBe(200);
    expect(await query('k', 'Sum(field=n)')).toEqual([{ value: 11, count: 2 }]);
  });

  it('import-roaring into the standard and a time view; GET answers 405', async () => {
    const rows = new Map([
      [4, new RoaringBitmap32([1, 2, 3])],
      [5, new RoaringBitmap32([7])],
    ]);
    const body = encodeImportRoaringRequest({ clear: false, views: [{ name: '', data: encodePilosaRoaring(rows) }] });
    const r = await req('POST', '/index/i/field/f/import-roaring/2', body, PB);
    expect(r.status, r.body).toBe(200);
    const base = 2 * 1048576;
    expect(await query('i', 'Row(f=4)Row(f=5)')).toEqual([
      { attrs: {}, columns: [base + 1, base + 2, base + 3] },
      { attrs: {}, columns: [base + 7] },
    ]);
    const tbody = encodeImportRoaringRequest({
      clear: false,
      views: [{ name: '2020', data: encodePilosaRoaring(new Map([[1, new RoaringBitmap32([9])]])) }],
    });
    expect((await req('POST', '/index/i/field/t/import-roaring/0', tbody, PB)).status).toBe(200);
    expect(
      await server.engine.read((h) => h.index('i')!.field('t')!.view('standard_2020')!.fragment(0)!.has(1, 9)),
    ).toBe(true);
    const clear = encodeImportRoaringRequest({
      clear: true,
      views: [{ name: '', data: encodePilosaRoaring(new Map([[4, new RoaringBitmap32([2])]])) }],
    });
    expect((await req('POST', '/index/i/field/f/import-roaring/2', clear, PB)).status).toBe(200);
    expect(await query('i', 'Row(f=4)')).toEqual([{ attrs: {}, columns: [base + 1, base + 3] }]);
    expect((await req('GET', '/index/i/field/f/import-roaring/0')).status).toBe(405);
  });

  it('a large import-roaring keeps its rows packed (as a bits import), and they read and change as rows', async () => {
    expect((await req('POST', '/index/i/field/big', '')).status).toBe(200);
    const dense = (start: number): Bitmap => {
      const b = new RoaringBitmap32();
      for (let c = start; c < 1048576; c += 7) b.add(c);
      return b;
    };
    const rows = new Map([
      [1, dense(0)],
      [2, dense(3)],
    ]);
    const want = [rows.get(1)!.size, rows.get(2)!.size, rows.get(1)!.andCardinality(rows.get(2)!)];
    const body = encodeImportRoaringRequest({ clear: false, views: [{ name: '', data: encodePilosaRoaring(rows) }] });
    expect((await req('POST', '/index/i/field/big/import-roaring/3', body, PB)).status).toBe(200);
    const packed = () =>
      server.engine.read((h) => h.index('i')!.field('big')!.view('standard')!.fragment(3)!.packedCount);
    expect(await packed()).toBe(2);
    expect(await query('i', 'Count(Row(big=1)) Count(Row(big=2)) Count(Intersect(Row(big=1), Row(big=2)))')).toEqual(
      want,
    );
    // A write to a packed row, and a second import into the same rows, change copies of them.
    const col = 3 * 1048576 + 1;
    expect(await query('i', `Set(${col}, big=1)`)).toEqual([true]);
    const more = encodeImportRoaringRequest({
      clear: false,
      views: [{ name: '', data: encodePilosaRoaring(new Map([[2, new RoaringBitmap32([2])]])) }],
    });
    expect((await req('POST', '/index/i/field/big/import-roaring/3', more, PB)).status).toBe(200);
    expect(await query('i', 'Count(Row(big=1)) Count(Row(big=2))')).toEqual([want[0] + 1, want[1] + 1]);
  });

  describe('bad input: 4xx naming the first offending item, nothing applied', () => {
    const cases: [string, () => Promise<{ status: number; body: string }>, number, RegExp][] = [
      [
        'unequal list lengths',
        () => importBits('i', 'f', { index: 'i', field: 'f', shard: 0, rowIds: [50, 50, 50], columnIds: [1, 2] }),
        400,
        /differ in length: 3 rows, 2 columns/,
      ],
      [
        'a column outside the named shard',
        () => importBits('i', 'f', { index: 'i', field: 'f', shard: 0, rowIds: [50, 50], columnIds: [1, 1048576] }),
        400,
        /column 1048576 of item 1 is not in shard 0/,
      ],
      [
        'timestamps of another length',
        () =>
          importBits('i', 't', {
            index: 'i',
            field: 't',
            shard: 0,
            rowIds: [50, 50],
            columnIds: [1, 2],
            timestamps: [1n],
          }),
        400,
        /timestamps has 1 items/,
      ],
      [
        'timestamps on a field without quantum',
        () =>
          importBits('i', 'f', {
            index: 'i',
            field: 'f',
            shard: 0,
            rowIds: [50],
            columnIds: [1],
            timestamps: [1_000_000_000n],
          }),
        400,
        /no time quantum/,
      ],
      [
        'a row key on a field without keys',
        () => importBits('i', 'f', { index: 'i', field: 'f', shard: 0, rowKeys: ['x'], columnIds: [1] }),
        400,
        /row keys cannot be used/,
      ],
      [
        'row ids on a keyed field',
        () => importBits('k', 'f', { index: 'k', field: 'f', rowIds: [1], columnKeys: ['a'] }),
        400,
        /row ids cannot be used/,
      ],
      [
        'bool row above 1',
        () => importBits('i', 'b', { index: 'i', field: 'b', shard: 0, rowIds: [1, 2], columnIds: [60, 61] }),
        400,
        /item 1 has row 2/,
      ],
      [
        'malformed protobuf body',
        () => req('POST', '/index/i/field/f/import', Buffer.from([0x22, 0xff, 0xff, 0xff]), PB),
        400,
        /unmarshaling/,
      ],
      [
        'unknown index',
        () => importBits('nope', 'f', { index: 'nope', field: 'f', shard: 0, rowIds: [1], columnIds: [1] }),
        404,
        /index not found/,
      ],
      [
        'unknown field',
        () => importBits('i', 'nope', { index: 'i', field: 'nope', shard: 0, rowIds: [1], columnIds: [1] }),
        404,
        /field not found/,
      ],
      [
        'an unknown view in import-roaring',
        () =>
          req(
            'POST',
            '/index/i/field/f/import-roaring/0',
            encodeImportRoaringRequest({
              clear: false,
              views: [{ name: '2020', data: encodePilosaRoaring(new Map([[50, new RoaringBitmap32([1])]])) }],
            }),
            PB,
          ),
        400,
        /view standard_2020 is not a view of set field/,
      ],
      [
        'corrupt roaring data',
        () =>
          req(
            'POST',
            '/index/i/field/f/import-roaring/0',
            encodeImportRoaringRequest({ clear: false, views: [{ name: '', data: Uint8Array.from([1, 2, 3, 4, 5]) }] }),
            PB,
          ),
        400,
        /./,
      ],
      [
        'import-roaring into an int field',
        () =>
          req(
            'POST',
            '/index/i/field/n/import-roaring/0',
            encodeImportRoaringRequest({
              clear: false,
              views: [{ name: '', data: encodePilosaRoaring(new Map([[50, new RoaringBitmap32([1])]])) }],
            }),
            PB,
          ),
        400,
        /only supported for set and time/,
      ],
      [
        'JSON with a non-integer column',
        () =>
          req('POST', '/index/i/field/f/import', JSON.stringify({ rowIDs: [50], columnIDs: ['x'] }), {
            'content-type': 'application/json',
          }),
        400,
        /columnIDs\[0\]/,
      ],
    ];
    for (const [name, run, status, message] of cases) {
      it(name, async () => {
        const before = await query('i', 'Row(f=50)Count(Not(Row(f=50)))Row(b=true)Sum(field=n)Row(t=50)');
        const r = await run();
        expect(r.status, r.body).toBe(status);
        expect((JSON.parse(r.body) as { error: { message: string } }).error.message).toMatch(message);
        expect(await query('i', 'Row(f=50)Count(Not(Row(f=50)))Row(b=true)Sum(field=n)Row(t=50)')).toEqual(before);
      });
    }
  });
});
