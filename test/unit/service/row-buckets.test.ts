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

const asMap = (b: ReturnType<typeof bucketByRow>): Map<number, number[]> =>
  new Map(b.rows.map((r, i) => [r, b.columns[i].toArray()]));

describe('bucketByRow', () => {
  it('matches the naive model (grouped, interleaved, huge rows, selections)', () => {
    const row = fc.oneof(fc.nat(20), fc.nat(5000), fc.constantFrom(2 ** 40, 2 ** 52, 7 * 2 ** 30));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(row, fc.nat(3 * 1048576 - 1)), { maxLength: 300 }),
        fc.boolean(),
        (pairs, group) => {
          if (group) pairs.sort((a, b) => a[0] - b[0]);
          const rows = pairs.map((p) => p[0]);
          const cols = pairs.map((p) => p[1]);
          for (const [shard, idx] of splitByShard(Float64Array.from(cols))) {
            const got = asMap(bucketByRow(Float64Array.from(rows), Float64Array.from(cols), shard, idx));
            expect(got).toEqual(naive(rows, cols, shard, idx === undefined ? undefined : [...idx]));
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("matches the model for sorted and nearly sorted Uint32Array input (the decoder's type)", () => {
    const row = fc.oneof(fc.nat(20), fc.nat(5000));
    const shape = fc.constantFrom('sorted', 'repeated-bits', 'row-twice', 'many-runs');
    fc.assert(
      fc.property(fc.array(fc.tuple(row, fc.nat(1048575)), { maxLength: 300 }), shape, (pairs, kind) => {
        pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        if (kind === 'repeated-bits' && pairs.length > 0) pairs.splice(pairs.length >> 1, 0, pairs[pairs.length >> 1]);
        // The first row again at the end: grouped-looking runs, but one row in two of them.
        if (kind === 'row-twice' && pairs.length > 0) pairs.push([pairs[0][0], 1048575]);
        if (kind === 'many-runs') pairs.forEach((p, i) => (p[0] = i));
        const rows = pairs.map((p) => p[0]);
        const cols = pairs.map((p) => p[1] + 2 * 1048576);
        const got = asMap(bucketByRow(Uint32Array.from(rows), Uint32Array.from(cols), 2));
        expect(got).toEqual(naive(rows, cols, 2));
      }),
      { numRuns: 500 },
    );
  });

  it('builds a sorted request of long rows (bitset containers) exactly', () => {
    const rows: number[] = [];
    const cols: number[] = [];
    for (const r of [3, 9, 400]) for (let c = r; c < 300_000; c += r % 7 === 2 ? 2 : 5) rows.push(r), cols.push(c);
    const got = asMap(bucketByRow(Uint32Array.from(rows), Uint32Array.from(cols), 0));
    expect(got).toEqual(naive(rows, cols, 0));
  });

  it('handles sorted requests with more runs than the first run table holds', () => {
    const rows: number[] = [];
    const cols: number[] = [];
    for (let r = 0; r < 1500; r++) for (let k = 0; k < 10; k++) rows.push(r * 3), cols.push(r + k * 1000);
    const got = asMap(bucketByRow(Uint32Array.from(rows), Uint32Array.from(cols), 0));
    expect(got.size).toBe(1500);
    expect(got).toEqual(naive(rows, cols, 0));
  });

  it('buckets a shuffled request with long rows and repeated pairs (sorted per row)', () => {
    const pairs: [number, number][] = [];
    for (let r = 0; r < 30; r++)
      for (let k = 0; k < 2000; k++) pairs.push([r * 5, 3 * 1048576 + ((k * 7919 + r) % 1048576)]);
    pairs.push(pairs[10], pairs[4000]);
    for (let i = pairs.length - 1; i > 0; i--) {
      const j = (i * 2654435761) % (i + 1);
      [pairs[i], pairs[j]] = [pairs[j], pairs[i]];
    }
    const rows = pairs.map((p) => p[0]);
    const cols = pairs.map((p) => p[1]);
    expect(asMap(bucketByRow(Uint32Array.from(rows), Uint32Array.from(cols), 3))).toEqual(naive(rows, cols, 3));
  });
});
