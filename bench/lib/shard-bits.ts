// The cluster bench's shards: rows of a hashed spread of bits over whole shards, as one
// per-shard protobuf import body each (what Pilosa's clients send).
import { SHARD_WIDTH } from '../../src/domain/shard.js';
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';

export interface ShardData {
  body: Uint8Array;
  bits: number;
  /** Bits of each row, by row ID. */
  perRow: Map<number, number>;
}

/** Bits of shard s: offset o is in row `row` when a hash of (o, row, s) falls in 1 of `every`. */
export function shardBody(index: string, s: number, rows: number[], every: number): ShardData {
  const rowIds: number[] = [];
  const columnIds: number[] = [];
  const perRow = new Map<number, number>();
  for (const row of rows)
    for (let o = 0; o < SHARD_WIDTH; o++)
      if (((Math.imul(o ^ Math.imul(row + 1, 0x9e3779b1), 0x85ebca6b) ^ s) >>> 0) % every === 0) {
        rowIds.push(row);
        columnIds.push(s * SHARD_WIDTH + o);
        perRow.set(row, (perRow.get(row) ?? 0) + 1);
      }
  return { body: encodeImportRequest({ index, field: 'f', shard: s, rowIds, columnIds }), bits: rowIds.length, perRow };
}
