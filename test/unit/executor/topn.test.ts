import { describe, expect, it } from 'vitest';
import { STANDARD_VIEW } from '../../../src/domain/names.js';
import { RoaringBitmap32 } from '../../../src/roaring/bitmap.js';
import { recalculateCaches } from '../../../src/executor/index.js';
import { fixture, keyedFixture } from './fixture.js';
import { MemorySink, one, run } from './harness.js';

describe('TopN', () => {
  const s = fixture();
  run(s, 'i', 'SetRowAttrs(s, 11, cat="x") SetRowAttrs(s, 12, cat="y", w=2)');
  recalculateCaches(s.holder);
  const cases: [string, unknown][] = [
    [
      'TopN(s)',
      [
        { id: 10, count: 3 },
        { id: 11, count: 1 },
        { id: 12, count: 1 },
      ],
    ],
    ['TopN(s, n=1)', [{ id: 10, count: 3 }]],
    [
      'TopN(s, n=2)',
      [
        { id: 10, count: 3 },
        { id: 11, count: 1 },
      ],
    ],
    [
      'TopN(s, Row(b=false))',
      [
        { id: 10, count: 1 },
        { id: 11, count: 1 },
        { id: 12, count: 1 },
      ],
    ],
    ['TopN(s, Row(m=1), n=5)', [{ id: 10, count: 1 }]],
    [
      'TopN(s, ids=[12, 11])',
      [
        { id: 11, count: 1 },
        { id: 12, count: 1 },
      ],
    ],
    [
      'TopN(s, ids=[12, 10], n=1)',
      [
        { id: 10, count: 3 },
        { id: 12, count: 1 },
      ],
    ],
    // The threshold applies per shard (Pilosa): row 10 has 2 bits in shard 0, 1 in shard 1.
    ['TopN(s, threshold=2)', [{ id: 10, count: 2 }]],
    ['TopN(s, Row(s=10), tanimotoThreshold=50)', [{ id: 10, count: 3 }]],
    [
      'TopN(s, Row(s=10), tanimotoThreshold=30)',
      [
        { id: 10, count: 3 },
        { id: 11, count: 1 },
      ],
    ],
    ['TopN(s, attrName=cat, attrValues=["x"])', [{ id: 11, count: 1 }]],
    [
      'TopN(s, attrName=cat, attrValues=["x", "y"])',
      [
        { id: 11, count: 1 },
        { id: 12, count: 1 },
      ],
    ],
    ['TopN(s, attrName=w, attrValues=[2])', [{ id: 12, count: 1 }]],
    ['TopN(s, Row(s=99))', []],
    [
      'TopN(m)',
      [
        { id: 1, count: 1 },
        { id: 2, count: 1 },
      ],
    ],
  ];
  it.each(cases)('%s', (pql, want) => expect(one(s, 'i', pql)).toEqual(want));

  it('is exact across shards (no per-shard top-n estimate)', () => {
    const t = new MemorySink().createIndex('i').createField('i', 'f');
    // Shard 0: a=3, b=2; shard 1: c=3, b=2. b is top overall with 4.
    run(t, 'i', 'Set(0, f=1) Set(1, f=1) Set(2, f=1) Set(3, f=2) Set(4, f=2)');
    run(t, 'i', 'Set(1048576, f=3) Set(1048577, f=3) Set(1048578, f=3) Set(1048579, f=2) Set(1048580, f=2)');
    expect(one(t, 'i', 'TopN(f, n=1)')).toEqual([{ id: 2, count: 4 }]);
  });

  it('walks past a tie at the threshold: an unseen row with the same count and a lower ID ranks first', () => {
    const t = new MemorySink().createIndex('i').createField('i', 'f');
    const sets = (shard: number, row: number, bits: number, from = 0): string =>
      Array.from({ length: bits }, (_, k) => `Set(${shard * 1048576 + from + k}, f=${row})`).join(' ');
    // Shard 0 ranks 9 (3), 1 (2), 5 (2); shard 1 ranks 2 (2), 3 (2), 5 (2), 9 (1). After depth 1
    // the best is 9 with 4 and τ = 2 + 2 = 4: row 5, not met yet, also has 4 and ranks first.
    run(t, 'i', [sets(0, 9, 3), sets(0, 1, 2), sets(0, 5, 2)].join(' '));
    run(t, 'i', [sets(1, 2, 2), sets(1, 3, 2), sets(1, 5, 2), sets(1, 9, 1)].join(' '));
    expect(one(t, 'i', 'TopN(f, n=1)')).toEqual([{ id: 5, count: 4 }]);
  });

  it('counts packed rows without keeping views of them', () => {
    const t = new MemorySink().createIndex('i').createField('i', 'f');
    const rows = Array.from({ length: 40 }, (_, r) => r);
    const columns = rows.map((r) => new RoaringBitmap32(Array.from({ length: 2000 + r }, (_, k) => k * 3)));
    t.emit({ type: 'BitsSet', index: 'i', field: 'f', view: STANDARD_VIEW, shard: 0, rows, columns, adopt: true });
    run(t, 'i', 'Set(3, f=100) Set(6, f=100) Set(9, f=100)');
    const frag = t.holder.indexes.get('i')?.fields.get('f')?.view(STANDARD_VIEW)?.fragment(0);
    expect(frag?.packedCount).toBe(40);
    expect(one(t, 'i', 'TopN(f, Row(f=100), n=2)')).toEqual([
      { id: 0, count: 3 },
      { id: 1, count: 3 },
    ]);
    expect(one(t, 'i', 'TopN(f, n=1)')).toEqual([{ id: 39, count: 2039 }]);
    expect(frag?.packedCount).toBe(40);
  });

  it('sees new rows after recalculateCaches', () => {
    const t = new MemorySink().createIndex('i').createField('i', 'f', 'set', { cacheSize: 2 });
    run(t, 'i', 'Set(1, f=1) Set(2, f=1) Set(3, f=2)');
    expect(one(t, 'i', 'TopN(f)')).toEqual([
      { id: 1, count: 2 },
      { id: 2, count: 1 },
    ]);
    run(t, 'i', 'Set(4, f=3) Set(5, f=3) Set(6, f=3)');
    // The ranked cache of shard 0 was computed by the first TopN: row 3 is not in it yet.
    expect(one(t, 'i', 'TopN(f)')).toEqual([
      { id: 1, count: 2 },
      { id: 2, count: 1 },
    ]);
    recalculateCaches(t.holder);
    // cacheSize 2: the two largest rows.
    expect(one(t, 'i', 'TopN(f)')).toEqual([
      { id: 3, count: 3 },
      { id: 1, count: 2 },
    ]);
  });

  it('lru caches keep the most recently written rows', () => {
    const t = new MemorySink().createIndex('i').createField('i', 'f', 'set', { cacheType: 'lru', cacheSize: 2 });
    run(t, 'i', 'Set(1, f=1) Set(2, f=1) Set(3, f=2)');
    recalculateCaches(t.holder);
    run(t, 'i', 'Set(4, f=3)');
    recalculateCaches(t.holder);
    expect(one(t, 'i', 'TopN(f)')).toEqual([
      { id: 1, count: 2 },
      { id: 3, count: 1 },
    ]);
  });

  it('returns keys on keyed fields (with Pilosa id 0)', () => {
    const k = keyedFixture();
    expect(one(k, 'k', 'TopN(kf)')).toEqual([
      { id: 0, key: 'x', count: 2 },
      { id: 0, key: 'y', count: 1 },
    ]);
  });
});
