// Every event type survives encode → decode, including the Bits fast path (with and without
// scratch bitmaps), its sparse form for small rows, format-1 records written by protobufjs, and
// the existence flag that imports set instead of logging columns twice.
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { decodeEvent, encodeEvent } from '../../../src/events/codec.js';
import type { Event } from '../../../src/events/types.js';
import { defaultFieldOptions, INT64_MAX, INT64_MIN } from '../../../src/domain/types.js';
import { RoaringBitmap32 } from '../../../src/roaring/bitmap.js';
import { apply } from '../../../src/events/apply.js';
import { Holder } from '../../../src/state/holder.js';
import { SPARSE_MAX_PER_ROW } from '../../../src/events/bits-encode.js';
import { EVENT_TYPE_CODES } from '../../../src/events/codec.js';
import { AssertionError } from '../../../src/util/assert.js';
import { protoPath } from '../../../src/util/proto-path.js';

const plain = (e: Event): unknown =>
  JSON.parse(
    JSON.stringify(e, (_k, v: unknown) =>
      v instanceof RoaringBitmap32
        ? v.toArray()
        : typeof v === 'bigint'
          ? `${v}n`
          : ArrayBuffer.isView(v)
            ? Array.from(v as unknown as ArrayLike<number | bigint>, (x) => (typeof x === 'bigint' ? `${x}n` : x))
            : v,
    ),
  );

const events: Event[] = [
  { type: 'IndexCreated', index: 'i', options: { keys: true, trackExistence: true } },
  {
    type: 'FieldCreated',
    index: 'i',
    field: 'n',
    options: { ...defaultFieldOptions('int'), min: INT64_MIN, max: INT64_MAX },
  },
  {
    type: 'FieldOptionsChanged',
    index: 'i',
    field: 't',
    options: { ...defaultFieldOptions('time'), timeQuantum: 'YMDH', noStandardView: true },
    meta: '123456789012',
  },
  {
    type: 'BitsSet',
    index: 'i',
    field: 'f',
    view: 'standard_2019',
    shard: 3,
    rows: [0, 2 ** 40],
    columns: [new RoaringBitmap32([1, 2]), new RoaringBitmap32([1048575])],
  },
  {
    type: 'BitsSet',
    index: 'i',
    field: 'f',
    view: 'standard',
    shard: 0,
    rows: [7],
    columns: [new RoaringBitmap32([9])],
    exists: true,
  },
  {
    type: 'BitsCleared',
    index: 'i',
    field: 'f',
    view: 'standard',
    shard: 1,
    rows: [1],
    columns: [new RoaringBitmap32([5])],
  },
  {
    type: 'BitsSet',
    index: 'i',
    field: 'f',
    view: 'standard',
    shard: 2 ** 33,
    rows: [3, 0],
    columns: [Uint32Array.of(1048575, 0, 7), Uint32Array.of()],
  },
  {
    type: 'BitsSet',
    index: 'i',
    field: 'f',
    view: 'standard',
    shard: 5,
    rows: [1, 2],
    columns: [Uint32Array.of(4), new RoaringBitmap32(range(0, 5000))],
  },
  {
    type: 'RowStored',
    index: 'i',
    field: 'f',
    view: 'standard',
    row: 4,
    shards: [0, 9],
    columns: [new RoaringBitmap32([1]), new RoaringBitmap32([2])],
  },
  {
    type: 'ValuesSet',
    index: 'i',
    field: 'n',
    shard: 2,
    columns: Uint32Array.from([1, 2]),
    values: BigInt64Array.from([INT64_MIN, INT64_MAX]),
  },
  { type: 'ValuesCleared', index: 'i', field: 'n', shard: 2, columns: Uint32Array.from([1]) },
  { type: 'KeysAssigned', index: 'i', field: '', firstId: 1, keys: ['a', 'é', ''] },
  {
    type: 'RowAttrsSet',
    index: 'i',
    field: 'f',
    row: 1,
    attrs: { s: 'x', i: -(2n ** 62n), b: true, f: 1.5, gone: null },
  },
  { type: 'ColumnAttrsSet', index: 'i', column: 2 ** 50, attrs: { s: 'y' } },
  { type: 'RowCleared', index: 'i', field: 'f', row: 3 },
  { type: 'FieldDeleted', index: 'i', field: 'f' },
  { type: 'IndexDeleted', index: 'i' },
];

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}

describe('event codec', () => {
  for (const e of events) {
    it(`round-trips ${e.type}${e.type === 'BitsSet' && e.exists ? ' (exists)' : ''}`, () => {
      const { type, payload } = encodeEvent(e);
      expect(plain(decodeEvent(type, payload))).toEqual(plain(e));
      expect(plain(decodeEvent(type, payload, true))).toEqual(plain(e));
    });
  }

  it('writes rows of at most 16 offsets as varints and larger ones as roaring, exactly as protobufjs did', () => {
    const Bits = protobuf.loadSync(protoPath(import.meta.url, 'log/events.proto')).lookupType('bitledger.log.Bits');
    const small = encodeEvent({
      type: 'BitsSet',
      index: 'i',
      field: 'f',
      view: 'standard',
      shard: 1,
      rows: [2],
      columns: [new RoaringBitmap32(range(0, SPARSE_MAX_PER_ROW))],
    });
    expect(Bits.toObject(Bits.decode(small.payload))).toMatchObject({
      counts: [SPARSE_MAX_PER_ROW],
      offsets: range(0, SPARSE_MAX_PER_ROW),
    });
    const bigRow = new RoaringBitmap32(range(0, SPARSE_MAX_PER_ROW + 1));
    const big = encodeEvent({
      type: 'BitsSet',
      index: 'i',
      field: 'f',
      view: 'standard',
      shard: 1,
      rows: [2],
      columns: [bigRow],
      exists: true,
    });
    const old = Bits.encode({
      index: 'i',
      field: 'f',
      view: 'standard',
      shard: 1,
      rows: [2],
      columns: [bigRow.serialize('portable')],
      exists: true,
    }).finish();
    expect(Buffer.from(big.payload).equals(Buffer.from(old))).toBe(true);
  });

  it('reads format-1 Bits records (roaring rows written by protobufjs)', () => {
    const Bits = protobuf.loadSync(protoPath(import.meta.url, 'log/events.proto')).lookupType('bitledger.log.Bits');
    const old = Bits.encode({
      index: 'i',
      field: 'f',
      view: 'v',
      shard: 9,
      rows: [1, 3],
      columns: [RoaringBitmap32.of(1).serialize('portable'), RoaringBitmap32.of(2, 3).serialize('portable')],
    }).finish();
    const e = decodeEvent(EVENT_TYPE_CODES.BitsCleared, old);
    expect(plain(e)).toEqual({
      type: 'BitsCleared',
      index: 'i',
      field: 'f',
      view: 'v',
      shard: 9,
      rows: [1, 3],
      columns: [[1], [2, 3]],
    });
  });

  it('refuses sparse Bits whose counts and offsets disagree', () => {
    const Bits = protobuf.loadSync(protoPath(import.meta.url, 'log/events.proto')).lookupType('bitledger.log.Bits');
    const bad = [
      { rows: [1, 2], counts: [1], offsets: [5] },
      { rows: [1], counts: [2], offsets: [5] },
      { rows: [1], counts: [1], offsets: [5, 6] },
      { rows: [1], counts: [1], offsets: [5], columns: [RoaringBitmap32.of(1).serialize('portable')] },
    ];
    for (const b of bad)
      expect(() =>
        decodeEvent(EVENT_TYPE_CODES.BitsSet, Bits.encode({ index: 'i', field: 'f', ...b }).finish()),
      ).toThrow(AssertionError);
  });

  it('skips fields it does not know, of every wire type, and refuses a truncated fixed-size field', () => {
    const unknown = Buffer.from([
      0xa0, 0x01, 0x05, 0xa9, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0xb5, 0x01, 1, 2, 3, 4, 0xba, 0x01, 0x02, 9, 9,
    ]);
    const cases: Event[] = [
      {
        type: 'BitsSet',
        index: 'i',
        field: 'f',
        view: 'standard',
        shard: 3,
        rows: [1],
        columns: [Uint32Array.of(4, 5)],
      },
      {
        type: 'ValuesSet',
        index: 'i',
        field: 'n',
        shard: 2,
        columns: Uint32Array.of(1),
        values: BigInt64Array.of(-5n),
      },
    ];
    for (const e of cases) {
      const { type, payload } = encodeEvent(e);
      expect(plain(decodeEvent(type, Buffer.concat([payload, unknown])))).toEqual(plain(e));
      expect(() => decodeEvent(type, Buffer.concat([payload, Buffer.from([0xa9, 0x01, 1, 2, 3])]))).toThrow(
        /truncated in a fixed-size field/,
      );
      expect(() => decodeEvent(type, Buffer.concat([payload, Buffer.from([0xa3, 0x01])]))).toThrow(
        /unsupported wire type 3/,
      );
    }
  });

  it('a BitsSet with exists also sets the columns in _exists, and only with tracking on', () => {
    const h = new Holder();
    apply(h, { type: 'IndexCreated', index: 'i', options: { keys: false, trackExistence: true } });
    apply(h, { type: 'IndexCreated', index: 'j', options: { keys: false, trackExistence: false } });
    for (const index of ['i', 'j']) {
      apply(h, { type: 'FieldCreated', index, field: 'f', options: defaultFieldOptions('set') });
      apply(h, {
        type: 'BitsSet',
        index,
        field: 'f',
        view: 'standard',
        shard: 1,
        rows: [1, 2],
        columns: [new RoaringBitmap32([3]), new RoaringBitmap32([4])],
        exists: true,
      });
    }
    expect(h.index('i')!.existence!.view('standard')!.fragment(1)!.row(0)!.toArray()).toEqual([3, 4]);
    expect(h.index('j')!.existence).toBeUndefined();
  });
});
