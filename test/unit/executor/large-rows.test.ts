// A large row answer (SHARD_COLUMNS_FROM columns or more) keeps its columns as each shard's
// offsets (executor/shard-columns.ts): the same columns, in order, as the array a small answer
// has; the response's columnAttrs found among them; shard restrictions and Count unchanged.
import { describe, expect, it } from 'vitest';
import { STANDARD_VIEW } from '../../../src/domain/names.js';
import { type Bitmap, RoaringBitmap32 } from '../../../src/roaring/bitmap.js';
import { SHARD_COLUMNS_FROM, ShardColumns } from '../../../src/executor/shard-columns.js';
import { MemorySink } from '../../helpers/memory-sink.js';
import { run } from './harness.js';

const W = 1 << 20;
const PER_SHARD = 100_000;

function sink(): MemorySink {
  const s = new MemorySink().createIndex('i').createField('i', 'f');
  const offsets = (step: number): Bitmap => new RoaringBitmap32(Array.from({ length: PER_SHARD }, (_, k) => k * step));
  // Row 1: shards 0 and 2 (none in 1); row 2: few columns.
  s.emit({
    type: 'RowStored',
    index: 'i',
    field: 'f',
    view: STANDARD_VIEW,
    row: 1,
    shards: [0, 2],
    columns: [offsets(3), offsets(5)],
  });
  s.emit({
    type: 'RowStored',
    index: 'i',
    field: 'f',
    view: STANDARD_VIEW,
    row: 2,
    shards: [0],
    columns: [offsets(1)],
  });
  return s;
}

const want = (shards: number[]): number[] =>
  shards.flatMap((s) => Array.from({ length: PER_SHARD }, (_, k) => s * W + k * (s === 0 ? 3 : 5)));

describe('large row answers', () => {
  const s = sink();
  run(s, 'i', `SetColumnAttrs(6, a=1) SetColumnAttrs(${2 * W + 10}, b=2) SetColumnAttrs(7, c=3)`);

  it('keep their columns as shard offsets, the same columns in order', () => {
    expect(2 * PER_SHARD).toBeGreaterThanOrEqual(SHARD_COLUMNS_FROM);
    const r = run(s, 'i', 'Row(f=1) Count(Row(f=1))').results;
    if (r[0].type !== 'row') throw new Error(r[0].type);
    expect(r[0].columns).toBeInstanceOf(ShardColumns);
    expect(r[0].columns.length).toBe(2 * PER_SHARD);
    expect((r[0].columns as ShardColumns).toArray()).toEqual(want([0, 2]));
    expect(r[1]).toEqual({ type: 'count', n: 2 * PER_SHARD });
  });

  it('a small answer (one shard of the row) stays an array', () => {
    const r = run(s, 'i', 'Row(f=1)', { shards: [2] }).results[0];
    if (r.type !== 'row') throw new Error(r.type);
    expect(Array.isArray(r.columns)).toBe(true);
    expect(r.columns).toEqual(want([2]));
  });

  it('finds the column attributes among them', () => {
    const resp = run(s, 'i', 'Row(f=1)', { columnAttrs: true });
    // 6 and 2·W+10 are in the row (multiples of 3 in shard 0, of 5 in shard 2); 7 is not.
    expect(resp.columnAttrs).toEqual([
      { id: 6, attrs: { a: 1n } },
      { id: 2 * W + 10, attrs: { b: 2n } },
    ]);
  });
});
