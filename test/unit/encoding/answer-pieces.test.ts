// The sliced encoders write the same bytes as the one-piece encoders, for every result shape,
// with answers large enough to be cut (row columns, keys, pairs, groups, row IDs, column attrs).
import { describe, expect, it } from 'vitest';
import { stringify } from '../../../src/encoding/json.js';
import { queryJsonChunks } from '../../../src/encoding/query-json-chunks.js';
import { queryResponseJson } from '../../../src/encoding/query-json.js';
import { encodeQueryResponse, queryResponseProtoPieces } from '../../../src/encoding/public-proto.js';
import type { QueryResponse } from '../../../src/executor/result.js';
import { ShardColumns } from '../../../src/executor/shard-columns.js';

const N = 20_000;
const ids = (n: number, step: number): number[] => Array.from({ length: n }, (_, i) => i * step);

const big: QueryResponse = {
  results: [
    { type: 'row', columns: ids(N, 37), attrs: { b: 'x"y', a: 1n, c: true, d: 1.5 } },
    { type: 'row', columns: [], keys: ids(N, 1).map((i) => `k${i},"`), attrs: {} },
    { type: 'row', columns: [5, 2 ** 53 - 1], attrs: {} },
    { type: 'count', n: 12 },
    { type: 'pairs', pairs: ids(N, 3).map((id) => ({ id, count: id + 1 })) },
    { type: 'pairs', pairs: ids(20, 3).map((id) => ({ id, key: `p${id}`, count: id + 1 })) },
    {
      type: 'groupcounts',
      groups: ids(N, 1).map((i) => ({
        group: [
          { field: 'f', rowID: i },
          { field: 'g', rowKey: `r${i}` },
        ],
        count: i,
      })),
    },
    { type: 'rowids', rows: ids(N, 2) },
    { type: 'rowids', rows: [], keys: ids(N, 1).map((i) => `key${i}`) },
    { type: 'rowids', rows: [], keys: [] },
    { type: 'valcount', value: -(2n ** 62n), count: 3 },
    { type: 'changed', changed: true },
    { type: 'null' },
    { type: 'pair', pair: { id: 4, count: 9 } },
  ],
  columnAttrs: ids(N, 5).map((id) => ({ id, attrs: { n: BigInt(id), s: `v${id}` } })),
};

const joinedText = (it: Iterable<string>): string => [...it].join('');
const joinedBytes = (it: Iterable<Uint8Array>): Buffer => Buffer.concat([...it]);

describe('answers in pieces', () => {
  it('JSON pieces join to the one-string answer, current and 0.x names', () => {
    for (const legacy of [false, true]) {
      const whole = stringify(queryResponseJson(big, legacy)) + '\n';
      const pieces = [...queryJsonChunks(big, legacy)];
      expect(pieces.length).toBeGreaterThan(20);
      expect(pieces.reduce((m, p) => Math.max(m, p.length), 0)).toBeLessThan(80 * 1024);
      expect(joinedText(pieces) === whole).toBe(true);
    }
  });

  it('protobuf pieces join to the one-buffer answer', () => {
    const whole = Buffer.from(encodeQueryResponse(big));
    const pieces = [...queryResponseProtoPieces(big)];
    expect(pieces.length).toBeGreaterThan(10);
    expect(joinedBytes(pieces).equals(whole)).toBe(true);
  });

  it('a row of bigint columns is cut the same way', () => {
    const resp: QueryResponse = {
      results: [{ type: 'row', columns: ids(N, 1).map((i) => 2n ** 60n + BigInt(i)), attrs: {} }],
    };
    expect(joinedBytes(queryResponseProtoPieces(resp)).equals(Buffer.from(encodeQueryResponse(resp)))).toBe(true);
    expect(joinedText(queryJsonChunks(resp))).toBe(stringify(queryResponseJson(resp)) + '\n');
  });

  it('a row kept as shard offsets writes the same text and bytes as its array', () => {
    // Shards 0, 2 and 3 (none in 1), large enough to be cut inside a shard.
    const offsets = (n: number, step: number): Uint32Array => Uint32Array.from(ids(n, step));
    const columns = new ShardColumns([
      { shard: 0, offsets: offsets(N, 7) },
      { shard: 2, offsets: offsets(3, 1) },
      { shard: 3, offsets: offsets(N, 50) },
    ]);
    const asArray = columns.toArray();
    expect(asArray.length).toBe(2 * N + 3);
    expect(asArray.slice(N - 1, N + 4)).toEqual([(N - 1) * 7, 2 << 20, (2 << 20) + 1, (2 << 20) + 2, 3 << 20]);
    expect([...columns]).toEqual(asArray);
    const sharded: QueryResponse = { results: [{ type: 'row', columns, attrs: { a: 1 } }] };
    const plain: QueryResponse = { results: [{ type: 'row', columns: asArray, attrs: { a: 1 } }] };
    const text = stringify(queryResponseJson(plain)) + '\n';
    expect(joinedText(queryJsonChunks(sharded)) === text).toBe(true);
    expect(stringify(queryResponseJson(sharded)) + '\n' === text).toBe(true);
    const bytes = Buffer.from(encodeQueryResponse(plain));
    expect(joinedBytes(queryResponseProtoPieces(sharded)).equals(bytes)).toBe(true);
    expect(Buffer.from(encodeQueryResponse(sharded)).equals(bytes)).toBe(true);
  });
});
