// The coordinator's merge of row partials (executor/merge.ts): holders' shards are disjoint, so a
// large merged answer keeps every holder's shard offsets in shard order (ShardColumns), whether a
// holder sent offsets or, for a small part, an array; a small answer, or one with a column past
// 2^53, is one ascending array. Either way the columns are those of a sort of them all.
import { describe, expect, it } from 'vitest';
import { mergePartials } from '../../../src/executor/merge.js';
import type { CallPartial } from '../../../src/executor/partial.js';
import type { ReadPlan } from '../../../src/executor/plan.js';
import { ShardColumns } from '../../../src/executor/shard-columns.js';

const W = 1 << 20;
// Only its kind matters to merging row partials.
const ROW = { kind: 'bitmap', plan: { kind: 'empty' } } as unknown as ReadPlan;

function range(from: number, n: number, step = 1): Uint32Array {
  return Uint32Array.from({ length: n }, (_, i) => from + i * step);
}

function columns(p: CallPartial): (number | bigint)[] {
  if (p.kind !== 'columns') throw new Error(p.kind);
  return p.columns instanceof ShardColumns ? p.columns.toArray() : [...p.columns];
}

const sorted = (xs: (number | bigint)[]): (number | bigint)[] => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

describe('merging row partials', () => {
  it('keeps a large answer as every holder’s shards in order, a small holder’s array split by shard', () => {
    const a = new ShardColumns([
      { shard: 1, offsets: range(0, 100_000, 3) },
      { shard: 4, offsets: range(5, 40_000) },
    ]);
    const b = new ShardColumns([{ shard: 2, offsets: range(7, 90_000, 2) }]);
    const small = [3, 9, 3 * W + 1, 3 * W + 2, 6 * W];
    const parts: CallPartial[] = [
      { kind: 'columns', columns: a },
      { kind: 'columns', columns: small },
      { kind: 'columns', columns: [] },
      { kind: 'columns', columns: b },
    ];
    const merged = mergePartials(ROW, parts);
    expect(merged.kind === 'columns' && merged.columns instanceof ShardColumns).toBe(true);
    expect(columns(merged)).toEqual(sorted([...a.toArray(), ...b.toArray(), ...small]));
  });

  it('merges a small answer, or one past 2^53, into one array', () => {
    const big = (1n << 60n) + 3n;
    const a = new ShardColumns([{ shard: 0, offsets: range(0, 140_000) }]);
    const withBig = mergePartials(ROW, [
      { kind: 'columns', columns: a },
      { kind: 'columns', columns: [2 * W, big] },
    ]);
    expect(Array.isArray(withBig.kind === 'columns' ? withBig.columns : undefined)).toBe(true);
    expect(columns(withBig)).toEqual([...a.toArray(), 2 * W, big]);
    const small = mergePartials(ROW, [
      { kind: 'columns', columns: [W + 1, 5 * W] },
      { kind: 'columns', columns: [2, 3 * W] },
    ]);
    expect(columns(small)).toEqual([2, W + 1, 3 * W, 5 * W]);
  });
});
