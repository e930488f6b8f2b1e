// A large row answer's columns kept as each shard's offsets (the Uint32Array roaring copies out,
// 4 bytes a column, off the JS heap) instead of one JS array of numbers. A 10M-column answer as
// a JS array is 80 MB the garbage collector marks whole in one pause (about 150 ms beside three
// such answers, issue 23's bench); as offsets the heap stays small, and the writers make the
// answer's text or bytes a bounded piece at a time (pieces()).
import { type ColumnId, MAX_SAFE_SHARD, SHARD_WIDTH } from '../domain/shard.js';

export interface ShardOffsets {
  shard: number;
  /** Ascending offsets in the shard (column = shard · 2^20 + offset). */
  offsets: Uint32Array;
}

/** Answers with at least this many columns keep them as ShardColumns (about 1 MiB of JSON). */
export const SHARD_COLUMNS_FROM = 131_072;

export class ShardColumns implements Iterable<number> {
  readonly length: number;

  /** `parts`: ascending by shard, every shard at most MAX_SAFE_SHARD (columns are numbers). */
  constructor(readonly parts: readonly ShardOffsets[]) {
    let n = 0;
    for (const p of parts) {
      if (p.shard > MAX_SAFE_SHARD) throw new Error('ShardColumns holds columns below 2^53 only');
      n += p.offsets.length;
    }
    this.length = n;
  }

  /** The columns in ascending order, at most `size` a piece (a small array each). */
  *pieces(size: number): Generator<number[], void, undefined> {
    for (const { shard, offsets } of this.parts) {
      const base = shard * SHARD_WIDTH;
      for (let at = 0; at < offsets.length; at += size) {
        const end = Math.min(offsets.length, at + size);
        const piece = new Array<number>(end - at);
        for (let i = at; i < end; i++) piece[i - at] = base + offsets[i];
        yield piece;
      }
    }
  }

  *[Symbol.iterator](): Iterator<number> {
    for (const { shard, offsets } of this.parts) {
      const base = shard * SHARD_WIDTH;
      for (let i = 0; i < offsets.length; i++) yield base + offsets[i];
    }
  }

  /** The greatest column (0 when empty). */
  last(): number {
    const p = this.parts[this.parts.length - 1];
    return p === undefined || p.offsets.length === 0 ? 0 : p.shard * SHARD_WIDTH + p.offsets[p.offsets.length - 1];
  }

  /** One JS array: only for answers small enough to be built whole (or by a caller that must). */
  toArray(): number[] {
    const out = new Array<number>(this.length);
    let n = 0;
    for (const { shard, offsets } of this.parts) {
      const base = shard * SHARD_WIDTH;
      for (let i = 0; i < offsets.length; i++) out[n++] = base + offsets[i];
    }
    return out;
  }
}

/** A row's columns as one array (ShardColumns made whole). */
export function columnArray(c: readonly ColumnId[] | ShardColumns): readonly ColumnId[] {
  return c instanceof ShardColumns ? c.toArray() : c;
}
