// Replay merges commuting records before applying them; the state it reaches must be exactly
// the state of applying every record in order. Small domains make collisions the common case:
// the same bit set twice, a column's value overwritten within one merge window, sets racing
// clears, values on fields that are deleted and re-created, big records overtaking small ones.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultFieldOptions } from '../../../src/domain/types.js';
import { ReplayCoalescer } from '../../../src/engine/replay-coalescer.js';
import { decodeEvent, encodeEvent } from '../../../src/events/codec.js';
import type { Event } from '../../../src/events/types.js';
import { apply } from '../../../src/events/apply.js';
import { stateDigest } from '../../../src/state/digest.js';
import { RoaringBitmap32 } from '../../../src/roaring/bitmap.js';
import { Holder } from '../../../src/state/holder.js';

const setup: Event[] = [
  { type: 'IndexCreated', index: 'i', options: { keys: false, trackExistence: true } },
  { type: 'FieldCreated', index: 'i', field: 'f', options: defaultFieldOptions('set') },
  {
    type: 'FieldCreated',
    index: 'i',
    field: 'n',
    options: { ...defaultFieldOptions('int'), min: -(2n ** 63n), max: 2n ** 63n - 1n },
  },
];

const offsets = fc.array(fc.nat(40), { minLength: 0, maxLength: 6 });
const event: fc.Arbitrary<Event> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ shard: fc.nat(1), row: fc.nat(3), cols: offsets, exists: fc.boolean() }).map(
      ({ shard, row, cols, exists }): Event => ({
        type: 'BitsSet',
        index: 'i',
        field: 'f',
        view: 'standard',
        shard,
        rows: [row],
        columns: [Uint32Array.from(cols)],
        ...(exists ? { exists } : {}),
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record({ shard: fc.nat(1), row: fc.nat(3) }).map(
      ({ shard, row }): Event => ({
        type: 'BitsSet',
        index: 'i',
        field: 'f',
        view: 'standard',
        shard,
        rows: [row],
        columns: [new RoaringBitmap32(Array.from({ length: 100 }, (_, k) => k * 2))],
      }),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record({ shard: fc.nat(1), row: fc.nat(3), cols: offsets }).map(
      ({ shard, row, cols }): Event => ({
        type: 'BitsCleared',
        index: 'i',
        field: 'f',
        view: 'standard',
        shard,
        rows: [row],
        columns: [Uint32Array.from(cols)],
      }),
    ),
  },
  {
    weight: 6,
    arbitrary: fc
      .record({
        shard: fc.nat(1),
        pairs: fc.array(fc.tuple(fc.nat(30), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })), {
          minLength: 1,
          maxLength: 5,
        }),
      })
      .map(
        ({ shard, pairs }): Event => ({
          type: 'ValuesSet',
          index: 'i',
          field: 'n',
          shard,
          columns: Uint32Array.from(pairs, (p) => p[0]),
          values: BigInt64Array.from(pairs, (p) => p[1]),
        }),
      ),
  },
  {
    weight: 1,
    arbitrary: fc.record({ shard: fc.nat(1), v: fc.bigInt({ min: -1000n, max: 1000n }) }).map(
      ({ shard, v }): Event => ({
        type: 'ValuesSet',
        index: 'i',
        field: 'n',
        shard,
        columns: Uint32Array.from({ length: 80 }, (_, k) => k),
        values: BigInt64Array.from({ length: 80 }, (_, k) => v * BigInt(k)),
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record({ shard: fc.nat(1), cols: offsets }).map(
      ({ shard, cols }): Event => ({
        type: 'ValuesCleared',
        index: 'i',
        field: 'n',
        shard,
        columns: Uint32Array.from(cols),
      }),
    ),
  },
  { weight: 1, arbitrary: fc.nat(3).map((row): Event => ({ type: 'RowCleared', index: 'i', field: 'f', row })) },
  {
    weight: 1,
    arbitrary: fc.nat(30).map((column): Event => ({ type: 'ColumnAttrsSet', index: 'i', column, attrs: { a: 'x' } })),
  },
);
const recreateInt: Event[] = [
  { type: 'FieldDeleted', index: 'i', field: 'n' },
  { type: 'FieldCreated', index: 'i', field: 'n', options: defaultFieldOptions('int') },
];

describe('replay coalescing', () => {
  it('reaches the state of applying every record in order, also through the codec with scratch reuse', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            { weight: 20, arbitrary: event.map((e) => [e]) },
            { weight: 1, arbitrary: fc.constant(recreateInt) },
          ),
          { maxLength: 80 },
        ),
        (groups) => {
          const events = [...setup, ...groups.flat()];
          const sequential = new Holder();
          for (const e of events) apply(sequential, e);
          const merged = new Holder();
          const c = new ReplayCoalescer(merged);
          // As replay does: encoded, then decoded into scratch that the next decode overwrites.
          for (const e of events) {
            const { type, payload } = encodeEvent(e);
            c.add(decodeEvent(type, payload, true));
          }
          c.flush();
          expect(stateDigest(merged)).toBe(stateDigest(sequential));
        },
      ),
      { numRuns: 400 },
    );
  });
});
