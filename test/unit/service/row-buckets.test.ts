// bucketByRow against a naive model, for grouped, interleaved, dense and sparse-huge rows.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bucketByRow, splitByShard } from '../../../src/service/import/row-buckets.js';

function naive(rows: number[], cols: number[], shard: number, idx?: number[]): Map<number, number[]> {
  const m = new Map<number, Set<number>>();
  for (const i of idx ?? rows.map((_, j) => j)) {
    if (!m.has(rows[i])) m.set(rows[i], new Set());
    m.get(rows[i])!.add(cols[i] - shard * 1048576);
  }
  return new Map([...m].sort((a, b) => a[0] - b[0]).map(([r, s]) => [r, [...s].sort((a, b) => a - b)]));
}

const asMap = (b: ReturnType<typeof bucketByRow>): Map<number, number[]> => new Map(b.rows.map((r, i) => [r, b.columns[i].toArray()]));

describe('bucketByRow', () => {
  it('matches the naive model (grouped, interleaved, huge rows, selections)', () => {
    const row = fc.oneof(fc.nat(20), fc.nat(5000), fc.constantFrom(2 ** 40, 2 ** 52, 7 * 2 ** 30));
    fc.assert(
      fc.property(fc.array(fc.tuple(row, fc.nat(3 * 1048576 - 1)), { maxLength: 300 }), fc.boolean(), (pairs, group) => {
        if (group) pairs.sort((a, b) => a[0] - b[0]);
        const rows = pairs.map((p) => p[0]);
        const cols = pairs.map((p) => p[1]);
        for (const [shard, idx] of splitByShard(Float64Array.from(cols))) {
          const got = asMap(bucketByRow(Float64Array.from(rows), Float64Array.from(cols), shard, idx));
          expect(got).toEqual(naive(rows, cols, shard, idx === undefined ? undefined : [...idx]));
        }
      }),
      { numRuns: 500 },
    );
  });
});
