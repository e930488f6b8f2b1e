import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { fnv1a64, partitionOf } from '../../../src/cluster/membership/partition.js';

const hex = ([hi, lo]: [number, number]): string => hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');

/** The reference: FNV-1a 64 in BigInt, index name then shard as 8 bytes big-endian. */
function reference(index: string, shard: number, partitions: number): number {
  let h = 0xcbf29ce484222325n;
  const bytes = [...new TextEncoder().encode(index)];
  const s = BigInt(shard);
  for (let i = 7; i >= 0; i--) bytes.push(Number((s >> BigInt(8 * i)) & 0xffn));
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return Number(h % BigInt(partitions));
}

describe('partitionOf', () => {
  it('is FNV-1a 64 (published vectors)', () => {
    const enc = new TextEncoder();
    expect(hex(fnv1a64(enc.encode('')))).toBe('cbf29ce484222325');
    expect(hex(fnv1a64(enc.encode('a')))).toBe('af63dc4c8601ec8c');
    expect(hex(fnv1a64(enc.encode('foobar')))).toBe('85944171f73967e8');
  });

  it('fixed vectors (index name then shard as big-endian uint64, mod P)', () => {
    expect(partitionOf('i', 0, 256)).toBe(reference('i', 0, 256));
    expect([partitionOf('i', 0, 64), partitionOf('i', 1, 64), partitionOf('repository', 7, 64)]).toEqual([
      reference('i', 0, 64),
      reference('i', 1, 64),
      reference('repository', 7, 64),
    ]);
    // Pinned so a change of the function (which would move every shard) fails here.
    expect([
      partitionOf('i', 0, 64),
      partitionOf('i', 1, 64),
      partitionOf('repository', 7, 64),
      partitionOf('ü', 2 ** 40, 1000),
    ]).toMatchInlineSnapshot(`
      [
        36,
        23,
        16,
        75,
      ]
    `);
  });

  it('agrees with the BigInt reference', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: 1, max: 10_000 }),
        (i, s, p) => {
          expect(partitionOf(i, s, p)).toBe(reference(i, s, p));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
