// Shard math: a column lives in shard floor(col / 2^20) at offset col % 2^20 (Pilosa's ShardWidth).
import { badRequest } from './errors.js';
export const SHARD_BITS = 20;
export const SHARD_WIDTH = 1 << SHARD_BITS; // 1048576

/** A column ID in a result: a number while exact (the common case), a bigint above 2^53 − 1. */
export type ColumnId = number | bigint;

export const shardOf = (column: ColumnId): number =>
  typeof column === 'number' ? Math.floor(column / SHARD_WIDTH) : Number(column >> 20n);
export const offsetOf = (column: ColumnId): number =>
  typeof column === 'number' ? column % SHARD_WIDTH : Number(column & 0xfffffn);
export const columnOf = (shard: number, offset: number): number => shard * SHARD_WIDTH + offset;

/**
 * The highest column ID this server supports: any uint64, as Pilosa's protobuf imports and
 * results. Every shard check derives from this one constant. Shards stay JS numbers (exact up to
 * 2^44); only a full column ID above 2^53−1 needs a bigint, at the edges (see ColumnId).
 */
export const MAX_COLUMN_ID = 2n ** 64n - 1n;
/** The shard of MAX_COLUMN_ID: (2^64 − 1) >> 20 = 2^44 − 1. */
export const MAX_SHARD = Number(MAX_COLUMN_ID >> BigInt(SHARD_BITS));
/** The last shard whose every column is an exact JS number (≤ 2^53 − 1): 2^33 − 1. */
export const MAX_SAFE_SHARD = Math.floor(Number.MAX_SAFE_INTEGER / SHARD_WIDTH);

/** shard · 2^20 + offset, exact: a number up to MAX_SAFE_SHARD, a bigint beyond. */
export function columnIdOf(shard: number, offset: number): ColumnId {
  return shard <= MAX_SAFE_SHARD ? shard * SHARD_WIDTH + offset : (BigInt(shard) << 20n) | BigInt(offset);
}

/** A shard number as a request names it: digits only, at most MAX_SHARD; else a 400 naming the limit. */
export function parseShard(text: string | undefined, what = 'shard'): number {
  if (text === undefined || !/^\d+$/.test(text)) throw badRequest(`${what} should be an unsigned integer`);
  return checkShard(Number(text), what, text);
}

/** A shard decoded from a body or PQL: at most MAX_SHARD (column IDs ≤ MAX_COLUMN_ID). */
export function checkShard(shard: number, what = 'shard', text: string = String(shard)): number {
  if (!Number.isInteger(shard) || shard < 0 || shard > MAX_SHARD) {
    throw badRequest(
      `${what} ${text} is out of range: ${what}s go up to ${MAX_SHARD}, as column IDs go up to ${MAX_COLUMN_ID}`,
    );
  }
  return shard;
}
