// Shard math: a column lives in shard floor(col / 2^20) at offset col % 2^20 (Pilosa's ShardWidth).
import { badRequest } from './errors.js';
export const SHARD_BITS = 20;
export const SHARD_WIDTH = 1 << SHARD_BITS; // 1048576

export const shardOf = (column: number): number => Math.floor(column / SHARD_WIDTH);
export const offsetOf = (column: number): number => column % SHARD_WIDTH;
export const columnOf = (shard: number, offset: number): number => shard * SHARD_WIDTH + offset;

/**
 * The highest column ID this server supports: IDs are JavaScript numbers, exact below 2^53. Every
 * shard check derives from this one constant (widening IDs to uint64 changes only this).
 */
export const MAX_COLUMN_ID = Number.MAX_SAFE_INTEGER;
/** The shard of MAX_COLUMN_ID: (2^53 − 1) >> 20. */
export const MAX_SHARD = Math.floor(MAX_COLUMN_ID / SHARD_WIDTH);

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
