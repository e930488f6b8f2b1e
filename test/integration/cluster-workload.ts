// The seeded random workload of the cluster equivalence test (not a test file itself): a schema
// with set/mutex/bool/int/time fields and a keyed index, PQL Set/Clear/ClearRow/Store, protobuf
// imports per shard (bits, int values, clears), keyed JSON imports, row and column attributes,
// a field and an index deleted, one bad request; and the fixed set of read queries whose answers
// a cluster node and a single server must give alike.
import { encodeImportRequest, encodeImportValueRequest } from '../../src/encoding/import-request-encode.js';

export interface WorkloadRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: string | Uint8Array;
  headers?: Record<string, string>;
}

const PB = { 'content-type': 'application/x-protobuf' };
const SHARD_WIDTH = 1 << 20;
/** Spread over partitions; 9 leaves gaps, so shards/max and empty shards are exercised. */
export const SHARDS = [0, 1, 2, 3, 5, 9];

/** xorshift32: a small seeded generator (the low bits of an LCG are far from random). */
export function rng(seed: number): (n: number) => number {
  let x = seed | 1;
  return (n) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

export const SCHEMA: WorkloadRequest[] = [
  { method: 'POST', path: '/index/c', body: '{"options":{"trackExistence":true}}' },
  { method: 'POST', path: '/index/c/field/s', body: '{}' },
  { method: 'POST', path: '/index/c/field/m', body: '{"options":{"type":"mutex"}}' },
  { method: 'POST', path: '/index/c/field/b', body: '{"options":{"type":"bool"}}' },
  { method: 'POST', path: '/index/c/field/n', body: '{"options":{"type":"int","min":-1000,"max":1000000}}' },
  { method: 'POST', path: '/index/c/field/t', body: '{"options":{"type":"time","timeQuantum":"YMD"}}' },
  { method: 'POST', path: '/index/c/field/gone', body: '{}' },
  { method: 'POST', path: '/index/k', body: '{"options":{"keys":true}}' },
  { method: 'POST', path: '/index/k/field/f', body: '{"options":{"keys":true}}' },
  { method: 'POST', path: '/index/k/field/v', body: '{"options":{"type":"int","min":0,"max":1000}}' },
  { method: 'POST', path: '/index/tmp', body: '{}' },
  { method: 'POST', path: '/index/tmp/field/x', body: '{}' },
];

const q = (index: string, pql: string): WorkloadRequest => ({
  method: 'POST',
  path: `/index/${index}/query`,
  body: pql,
});

/** `ops` random writes after the schema, with deletes and a bad request part-way. */
export function workload(seed: number, ops: number): WorkloadRequest[] {
  const r = rng(seed);
  const col = (): number => SHARDS[r(SHARDS.length)] * SHARD_WIDTH + r(400);
  const row = (): number => r(6);
  const out: WorkloadRequest[] = [...SCHEMA];
  for (let i = 0; i < ops; i++) {
    if (i === Math.floor(ops / 3)) {
      out.push(q('c', `Set(${col()}, gone=1) Set(${col()}, gone=2)`));
      out.push(q('tmp', `Set(${col()}, x=1)`));
      out.push({ method: 'DELETE', path: '/index/c/field/gone' });
      out.push({ method: 'DELETE', path: '/index/tmp' });
      out.push({ method: 'POST', path: '/index/c/field/gone', body: '{"options":{"type":"mutex"}}' });
      out.push(q('c', `Set(${col()}, gone=3)`));
      out.push(q('c', `Set(${col()}, nosuchfield=1)`));
    }
    const pick = r(100);
    if (pick < 30) {
      const calls = Array.from({ length: 1 + r(4) }, () => {
        const c = col();
        switch (r(5)) {
          case 0:
            return `Set(${c}, m=${row()})`;
          case 1:
            return `Set(${c}, b=${r(2) === 0 ? 'true' : 'false'})`;
          case 2:
            return `Set(${c}, n=${r(2000) - 500})`;
          case 3:
            return `Set(${c}, t=${row()}, 2019-0${1 + r(3)}-1${r(9)}T0${r(9)}:00)`;
          default:
            return `Set(${c}, s=${row()})`;
        }
      });
      out.push(q('c', calls.join(' ')));
    } else if (pick < 40) {
      out.push(q('c', `Clear(${col()}, s=${row()}) Clear(${col()}, m=${row()})`));
    } else if (pick < 43) {
      out.push(q('c', `ClearRow(s=${row()})`));
    } else if (pick < 46) {
      out.push(q('c', `Store(Row(s=${row()}), s=${6 + r(2)})`));
    } else if (pick < 60) {
      const shard = SHARDS[r(SHARDS.length)];
      const n = 10 + r(40);
      const columnIds = Array.from({ length: n }, () => shard * SHARD_WIDTH + r(400));
      const body = encodeImportRequest({
        index: 'c',
        field: 's',
        shard,
        rowIds: columnIds.map(() => row()),
        columnIds,
      });
      const clear = r(6) === 0 ? '?clear=true' : '';
      out.push({ method: 'POST', path: `/index/c/field/s/import${clear}`, body, headers: PB });
    } else if (pick < 68) {
      const shard = SHARDS[r(SHARDS.length)];
      const columnIds = Array.from({ length: 5 + r(20) }, () => shard * SHARD_WIDTH + r(400));
      const values = columnIds.map(() => BigInt(r(5000) - 1000));
      const body = encodeImportValueRequest({ index: 'c', field: 'n', shard, columnIds, values });
      out.push({ method: 'POST', path: '/index/c/field/n/import', body, headers: PB });
    } else if (pick < 75) {
      out.push(q('c', `SetRowAttrs(s, ${row()}, color="${['red', 'blue'][r(2)]}", w=${r(100)})`));
      out.push(q('c', `SetColumnAttrs(${col()}, name="x${r(50)}", active=${r(2) === 0})`));
    } else if (pick < 88) {
      const u = r(60);
      out.push(q('k', `Set("u${u}", f="${['red', 'blue', 'green'][r(3)]}") Set("u${u}", v=${r(1000)})`));
    } else if (pick < 94) {
      const n = 5 + r(20);
      const columnKeys = Array.from({ length: n }, () => `u${r(90)}`);
      const rowKeys = columnKeys.map(() => ['red', 'blue', 'amber'][r(3)]);
      out.push({ method: 'POST', path: '/index/k/field/f/import', body: JSON.stringify({ rowKeys, columnKeys }) });
    } else {
      out.push(q('k', `Clear("u${r(60)}", f="red")`));
    }
  }
  return out;
}

/** The fixed read queries: [index, query string ('' or '?…'), PQL]. */
export const READS: [string, string, string][] = [
  ...[0, 1, 2, 3, 4, 5, 6, 7].map((n): [string, string, string] => ['c', '', `Count(Row(s=${n}))`]),
  ['c', '', 'Count(Intersect(Row(s=0), Row(s=1)))'],
  ['c', '', 'Count(Union(Row(s=2), Row(s=3), Row(m=1)))'],
  ['c', '', 'Count(Difference(Row(s=1), Row(s=4)))'],
  ['c', '', 'Count(Xor(Row(s=5), Row(b=true)))'],
  ['c', '', 'Count(Not(Row(s=1)))'],
  ['c', '', 'Row(s=1)'],
  ['c', '', 'Row(s=6) Row(s=7)'],
  ['c', '', 'Row(m=2)'],
  ['c', '', 'Row(b=true)'],
  ['c', '', 'Row(b=false)'],
  ['c', '', 'Row(n > 100)'],
  ['c', '', 'Row(n < 0)'],
  ['c', '', 'Row(-200 < n < 300)'],
  ['c', '', 'Row(t=2, from=2019-01-01T00:00, to=2019-02-15T00:00)'],
  ['c', '', 'Row(gone=3)'],
  ['c', '', 'TopN(s)'],
  ['c', '', 'TopN(s, n=2)'],
  ['c', '', 'TopN(s, Row(b=true), n=3)'],
  ['c', '', 'GroupBy(Rows(s))'],
  ['c', '', 'GroupBy(Rows(s), Rows(m), limit=7)'],
  ['c', '', 'GroupBy(Rows(m), filter=Row(b=true))'],
  ['c', '', 'Rows(s)'],
  ['c', '', 'Rows(m, limit=2)'],
  ['c', '', 'Rows(s, previous=1)'],
  ['c', '', 'Sum(field=n)'],
  ['c', '', 'Sum(Row(s=1), field=n)'],
  ['c', '', 'Min(field=n)'],
  ['c', '', 'Max(field=n)'],
  ['c', '', 'Max(Row(m=3), field=n)'],
  ['c', '', 'MinRow(field=s)'],
  ['c', '', 'MaxRow(field=s)'],
  ['c', '', 'Options(Row(s=1), columnAttrs=true)'],
  ['c', '', 'Options(Row(s=2), excludeRowAttrs=true)'],
  ['c', '', 'Options(Count(Row(s=1)), shards=[0, 2, 9])'],
  ['c', '', 'Options(Row(s=0), shards=[1, 5])'],
  ['c', '?shards=0,3', 'Count(Row(s=3))'],
  ['c', '?columnAttrs=true', 'Row(s=4)'],
  ['c', '', 'Count(Row(nosuchfield=1))'],
  ['k', '', 'Row(f="red")'],
  ['k', '', 'Count(Row(f="blue"))'],
  ['k', '', 'Row(f="amber")'],
  ['k', '', 'TopN(f)'],
  ['k', '', 'Rows(f)'],
  ['k', '', 'GroupBy(Rows(f))'],
  ['k', '', 'Sum(field=v)'],
  ['k', '', 'Row(v > 500)'],
  ['k', '', 'Count(Not(Row(f="green")))'],
  ['tmp', '', 'Count(Row(x=1))'],
];

/** JSON with object keys sorted at every level (arrays keep their order); other text as is. */
export function normalised(text: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)));
  } catch {
    return text;
  }
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, sortKeys(o[k])]),
  );
}
