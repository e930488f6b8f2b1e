// Column IDs in the whole uint64 range: imported by protobuf (1.x and 0.x), JSON and roaring,
// stored in shard col >> 20 at offset col & (2^20 − 1), and answered exact in JSON (bare digits,
// never a rounded double) and protobuf results, export CSV, Shift and /internal/shards/max —
// also after a restart (the log and snapshots carry shards above 2^32).
import { RoaringBitmap32 } from 'roaring';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeImportRequest, encodeImportValueRequest } from '../../src/encoding/import-request-encode.js';
import {
  decodeQueryResponse,
  encodeImportRoaringRequest,
  encodeQueryRequest,
} from '../../src/encoding/public-proto.js';
import { MAX_SHARD } from '../../src/domain/shard.js';
import { encodePilosaRoaring } from '../../src/roaring/pilosa-roaring.js';
import { startServer, stopServer, type TestServer } from '../helpers/server.js';

const C53 = 2n ** 53n + 1n; // 9007199254740993: the first ID a double cannot hold
const C63 = 2n ** 63n - 1n; // Pilosa's PQL limit
const C64 = 2n ** 64n - 1n; // the last uint64
const shardOf = (c: bigint): number => Number(c >> 20n);
const PB = { 'content-type': 'application/x-protobuf', accept: 'application/x-protobuf' };

let s: TestServer;
async function req(method: 'GET' | 'POST', url: string, payload: string | Uint8Array = '', headers = {}) {
  const r = await s.app.inject({
    method,
    url,
    payload: typeof payload === 'string' ? payload : Buffer.from(payload),
    headers,
  });
  return { status: r.statusCode, body: r.body, raw: r.rawPayload };
}
const query = async (index: string, pql: string): Promise<string> => {
  const r = await req('POST', `/index/${index}/query`, pql);
  expect(r.status, r.body).toBe(200);
  return r.body.trim();
};
/** A protobuf ImportRequest per shard, as client libraries send them. */
async function importBits(index: string, field: string, rows: number[], cols: bigint[]): Promise<void> {
  for (const shard of new Set(cols.map(shardOf))) {
    const sel = cols.map((_, i) => i).filter((i) => shardOf(cols[i]) === shard);
    const body = encodeImportRequest({
      index,
      field,
      shard,
      rowIds: sel.map((i) => rows[i]),
      columnIds: sel.map((i) => cols[i]),
    });
    const r = await req('POST', `/index/${index}/field/${field}/import`, body, PB);
    expect(r.status, r.body).toBe(200);
  }
}

beforeAll(async () => {
  s = await startServer();
  for (const [url, body] of [
    ['/index/i', '{"options":{"trackExistence":true}}'],
    ['/index/i/field/f', ''],
    ['/index/i/field/v', '{"options":{"type":"int","min":0,"max":1000}}'],
    ['/index/j', ''],
    ['/index/j/field/f', ''],
    ['/index/l', ''],
    ['/index/l/frame/fr', ''],
  ])
    expect((await req('POST', url, body)).status).toBe(200);
});
afterAll(() => stopServer(s));

describe('column IDs above 2^53 − 1', () => {
  it('protobuf ImportRequest stores them in their shard; Row, Count, TopN, GroupBy answer exact', async () => {
    await importBits('i', 'f', [1, 1, 1, 1, 2], [3n, C53, C63, C64, C64]);
    expect(await query('i', 'Row(f=1) Row(f=2) Count(Row(f=1)) TopN(f) GroupBy(Rows(f))')).toBe(
      `{"results":[{"attrs":{},"columns":[3,${C53},${C63},${C64}]},{"attrs":{},"columns":[${C64}]},4,` +
        '[{"id":1,"count":4},{"id":2,"count":1}],' +
        '[{"group":[{"field":"f","rowID":1}],"count":4},{"group":[{"field":"f","rowID":2}],"count":1}]]}',
    );
    // Set algebra across the huge shards, and Not through existence (set by the import).
    expect(await query('i', 'Difference(Row(f=1), Row(f=2)) Not(Row(f=2))')).toBe(
      `{"results":[{"attrs":{},"columns":[3,${C53},${C63}]},{"attrs":{},"columns":[3,${C53},${C63}]}]}`,
    );
  });

  it('answers the same columns in a protobuf QueryResponse (uint64, exact)', async () => {
    const r = await req('POST', '/index/i/query', encodeQueryRequest({ query: 'Row(f=1)' }), PB);
    expect(r.status).toBe(200);
    expect(decodeQueryResponse(r.raw).results).toEqual([{ type: 'row', columns: [3, C53, C63, C64], attrs: {} }]);
  });

  it('imports values (ImportValueRequest) at huge columns', async () => {
    for (const [col, value] of [
      [C53, 7n],
      [C64, 9n],
    ] as const) {
      const body = encodeImportValueRequest({
        index: 'i',
        field: 'v',
        shard: shardOf(col),
        columnIds: [col],
        values: [value],
      });
      expect((await req('POST', '/index/i/field/v/import', body, PB)).status).toBe(200);
    }
    expect(await query('i', 'Sum(field=v) Row(v > 8) Row(v < 8)')).toBe(
      `{"results":[{"value":16,"count":2},{"attrs":{},"columns":[${C64}]},{"attrs":{},"columns":[${C53}]}]}`,
    );
  });

  it('imports JSON bodies with bare uint64 column IDs', async () => {
    const json = { 'content-type': 'application/json' };
    for (const cols of [[1n, 2n], [C63], [C64 - 5n, C64]]) {
      const body = `{"rowIDs":[${cols.map(() => 5).join(',')}],"columnIDs":[${cols.join(',')}]}`;
      const r = await req('POST', '/index/j/field/f/import', body, json);
      expect(r.status, r.body).toBe(200);
    }
    expect(await query('j', 'Row(f=5)')).toBe(`{"results":[{"attrs":{},"columns":[1,2,${C63},${C64 - 5n},${C64}]}]}`);
    // One body's columns must lie within 2^53 − 1 of each other (clients send one shard a request).
    const spread = await req('POST', '/index/j/field/f/import', `{"rowIDs":[5,5],"columnIDs":[1,${C64}]}`, json);
    expect(spread.status).toBe(400);
    expect(spread.body).toContain('span more than 2^53-1 columns in one import');
    const tooBig = `{"rowIDs":[5],"columnIDs":[${2n ** 64n}]}`;
    const bad = await req('POST', '/index/j/field/f/import', tooBig, { 'content-type': 'application/json' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatch(/columnIDs\[0\] must be an unsigned integer up to 18446744073709551615/);
  });

  it('refuses an import whose columns are not in the shard it names', async () => {
    const body = encodeImportRequest({ index: 'j', field: 'f', shard: 1, rowIds: [1], columnIds: [C63] });
    const r = await req('POST', '/index/j/field/f/import', body, PB);
    expect(r.status).toBe(400);
    expect(r.body).toContain(`column ${C63} of item 0 is not in shard 1`);
  });

  it('imports roaring at the last shard (2^44 − 1), offset 2^20 − 1 = column 2^64 − 1', async () => {
    expect(MAX_SHARD).toBe(2 ** 44 - 1);
    const data = encodePilosaRoaring(new Map([[7, new RoaringBitmap32([2 ** 20 - 1, 0])]]));
    const body = encodeImportRoaringRequest({ clear: false, views: [{ name: '', data }] });
    const r = await req('POST', `/index/j/field/f/import-roaring/${MAX_SHARD}`, body, PB);
    expect(r.status, r.body).toBe(200);
    expect(await query('j', 'Row(f=7)')).toBe(`{"results":[{"attrs":{},"columns":[${C64 - 2n ** 20n + 1n},${C64}]}]}`);
    const over = await req('POST', `/index/j/field/f/import-roaring/${MAX_SHARD + 1}`, body, PB);
    expect(over.status).toBe(400);
  });

  it('imports by the legacy /import (frame and slice in the body)', async () => {
    const body = encodeImportRequest({ index: 'l', field: 'fr', shard: shardOf(C63), rowIds: [4], columnIds: [C63] });
    expect((await req('POST', '/import', body, PB)).status).toBe(200);
    expect(await query('l', 'Bitmap(frame=fr, row=4)')).toBe(`{"results":[{"attrs":{},"bits":[${C63}]}]}`);
  });

  it('exports CSV with exact column IDs', async () => {
    const r = await req('GET', `/export?index=i&field=f&shard=${shardOf(C64)}`, '', { accept: 'text/csv' });
    expect(r.status).toBe(200);
    expect(r.body).toBe(`1,${C64}\n2,${C64}\n`);
    const r53 = await req('GET', `/export?index=i&field=f&shard=${shardOf(C53)}`, '', { accept: 'text/csv' });
    expect(r53.body).toBe(`1,${C53}\n`);
  });

  it('shifts across huge shards; a column shifted past 2^64 − 1 is gone', async () => {
    expect(await query('i', 'Shift(Row(f=1), n=1)')).toBe(
      `{"results":[{"attrs":{},"columns":[4,${C53 + 1n},${C63 + 1n}]}]}`,
    );
  });

  it('/internal/shards/max names shards above 2^32 exact', async () => {
    const r = await req('GET', '/internal/shards/max');
    expect(JSON.parse(r.body)).toEqual({ standard: { i: shardOf(C64), j: MAX_SHARD, l: shardOf(C63) } });
  });

  it('keeps every huge column across a restart (log replay of shards above 2^32)', async () => {
    // A snapshot first, so that the log after it replays a RowStored (Store: its shards a list),
    // a ValuesSet and a BitsSet, each at shards above 2^32.
    await s.engine.snapshots.take();
    expect(await query('i', 'Store(Row(f=1), f=8)')).toBe('{"results":[true]}');
    const value = encodeImportValueRequest({
      index: 'i',
      field: 'v',
      shard: shardOf(C64),
      columnIds: [C64],
      values: [10n],
    });
    expect((await req('POST', '/index/i/field/v/import', value, PB)).status).toBe(200);
    await importBits('i', 'f', [9], [C64]);
    const pql = 'Row(f=8) Sum(field=v) Row(v == 10) Row(f=9)';
    const before = await query('i', pql);
    expect(before).toBe(
      `{"results":[{"attrs":{},"columns":[3,${C53},${C63},${C64}]},{"value":17,"count":2},` +
        `{"attrs":{},"columns":[${C64}]},{"attrs":{},"columns":[${C64}]}]}`,
    );
    await s.close();
    s = Object.assign(await startServer({ dataDir: s.dataDir }), {});
    expect(await query('i', pql)).toBe(before);
    expect(await query('j', 'Row(f=7)')).toContain(`${C64}]`);
  });

  it('PQL Set, Clear, Row, Count, Rows(column=) and int Set take column literals up to 2^63 − 1', async () => {
    expect(await query('i', `Set(${C53}, f=3) Set(${C63}, f=3) Set(${C63}, f=3) Set(5, f=3)`)).toBe(
      '{"results":[true,true,false,true]}',
    );
    expect(await query('i', `Row(f=3) Count(Row(f=3)) Clear(${C63}, f=3) Row(f=3) Rows(f, column=${C53})`)).toBe(
      `{"results":[{"attrs":{},"columns":[5,${C53},${C63}]},3,true,{"attrs":{},"columns":[5,${C53}]},{"rows":[1,3,8]}]}`,
    );
    expect(await query('i', `Set(${C63}, v=100) Row(v == 100) Not(Row(f=1))`)).toBe(
      `{"results":[true,{"attrs":{},"columns":[${C63}]},{"attrs":{},"columns":[5]}]}`,
    );
  });

  it('keyed fields: huge columns under row keys (Set, import, Row, TopN, GroupBy)', async () => {
    expect((await req('POST', '/index/i/field/k', '{"options":{"keys":true}}')).status).toBe(200);
    expect(await query('i', `Set(${C63}, k="a")`)).toBe('{"results":[true]}');
    const body = encodeImportRequest({
      index: 'i',
      field: 'k',
      shard: shardOf(C53),
      rowKeys: ['a', 'b'],
      columnIds: [C53, C53],
    });
    expect((await req('POST', '/index/i/field/k/import', body, PB)).status).toBe(200);
    expect(await query('i', 'Row(k="a") TopN(k) GroupBy(Rows(k))')).toBe(
      `{"results":[{"attrs":{},"columns":[${C53},${C63}]},[{"id":0,"key":"a","count":2},{"id":0,"key":"b","count":1}],` +
        '[{"group":[{"field":"k","rowKey":"a"}],"count":2},{"group":[{"field":"k","rowKey":"b"}],"count":1}]]}',
    );
  });

  it('larger PQL literals, and attributes on columns above 2^53 − 1, are refused naming the limit', async () => {
    for (const [pql, text] of [
      // The parser's own limit (Pilosa's), and the column's: the same bound.
      [`Set(${2n ** 63n}, f=1)`, 'integer is not in signed 64-bit range: 9223372036854775808'],
      [`Clear(${C64}, f=1)`, 'integer is not in signed 64-bit range: 18446744073709551615'],
      [`SetColumnAttrs(${C53}, x=1)`, 'larger than the maximum for attributes, 9007199254740991'],
    ]) {
      const r = await req('POST', '/index/i/query', pql);
      expect(r.status, pql).toBe(400);
      expect(r.body, pql).toContain(text);
    }
  });
});
