// The state digest must see everything the holder holds: for every event type, applying one
// event of it changes the digest. So a replay (or snapshot, or replica) that drops or mangles any
// kind of event — LegacyMetaSet, an ingest's offsets, a key — cannot compare equal.
import roaring from 'roaring';
import { describe, expect, it } from 'vitest';
import { defaultFieldOptions } from '../../../src/domain/types.js';
import type { Event, EventType } from '../../../src/events/types.js';
import { apply } from '../../../src/events/apply.js';
import { stateDigest } from '../../../src/state/digest.js';
import { Holder } from '../../../src/state/holder.js';

const { RoaringBitmap32 } = roaring;

/** A state with something of every kind in it. */
const BASE: Event[] = [
  { type: 'IndexCreated', index: 'i', options: { keys: true, trackExistence: true } },
  { type: 'FieldCreated', index: 'i', field: 'f', options: { ...defaultFieldOptions('set'), keys: true } },
  { type: 'FieldCreated', index: 'i', field: 'n', options: { ...defaultFieldOptions('int'), min: -100n, max: 1000n } },
  {
    type: 'BitsSet',
    index: 'i',
    field: 'f',
    view: 'standard',
    shard: 0,
    rows: [1, 2],
    columns: [Uint32Array.of(1, 2, 3), Uint32Array.of(5)],
  },
  {
    type: 'ValuesSet',
    index: 'i',
    field: 'n',
    shard: 0,
    columns: Uint32Array.of(1, 2),
    values: BigInt64Array.of(7n, -3n),
  },
  { type: 'KeysAssigned', index: 'i', field: '', firstId: 1, keys: ['a', 'b'] },
  { type: 'KeysAssigned', index: 'i', field: 'f', firstId: 1, keys: ['r1'] },
  { type: 'RowAttrsSet', index: 'i', field: 'f', row: 1, attrs: { x: 1n } },
  { type: 'ColumnAttrsSet', index: 'i', column: 1, attrs: { y: 'z' } },
  { type: 'LegacyMetaSet', index: 'i', key: 'frame:f', value: '{"cacheType":"ranked"}' },
  { type: 'IngestDefined', name: 'in', spec: '{"topic":"t"}', paused: false },
  { type: 'CommandApplied', topic: 'log', partition: 0, offset: '9', position: '10', timeMs: 500 },
  {
    type: 'KafkaOffsetsCommitted',
    ingest: 'in',
    topic: 't',
    partitions: [0],
    offsets: ['10'],
    records: 10,
    deadLettered: 0,
  },
];

/** One event of each type, each a change to BASE. The Record makes a new type a compile error here. */
const CHANGE: Record<EventType, Event[]> = {
  IndexCreated: [{ type: 'IndexCreated', index: 'j', options: { keys: false, trackExistence: false } }],
  IndexDeleted: [{ type: 'IndexDeleted', index: 'i' }],
  FieldCreated: [{ type: 'FieldCreated', index: 'i', field: 'g', options: defaultFieldOptions('mutex') }],
  FieldDeleted: [{ type: 'FieldDeleted', index: 'i', field: 'f' }],
  FieldOptionsChanged: [
    {
      type: 'FieldOptionsChanged',
      index: 'i',
      field: 'f',
      options: { ...defaultFieldOptions('time'), keys: true, timeQuantum: 'YM' },
      meta: '3',
    },
  ],
  BitsSet: [
    { type: 'BitsSet', index: 'i', field: 'f', view: 'standard', shard: 0, rows: [1], columns: [Uint32Array.of(9)] },
  ],
  BitsCleared: [
    {
      type: 'BitsCleared',
      index: 'i',
      field: 'f',
      view: 'standard',
      shard: 0,
      rows: [1],
      columns: [Uint32Array.of(2)],
    },
  ],
  RowCleared: [{ type: 'RowCleared', index: 'i', field: 'f', row: 2 }],
  RowStored: [
    {
      type: 'RowStored',
      index: 'i',
      field: 'f',
      view: 'standard',
      row: 1,
      shards: [0],
      columns: [new RoaringBitmap32([1, 2])],
    },
  ],
  ValuesSet: [
    { type: 'ValuesSet', index: 'i', field: 'n', shard: 0, columns: Uint32Array.of(1), values: BigInt64Array.of(8n) },
  ],
  ValuesCleared: [{ type: 'ValuesCleared', index: 'i', field: 'n', shard: 0, columns: Uint32Array.of(2) }],
  KeysAssigned: [{ type: 'KeysAssigned', index: 'i', field: '', firstId: 3, keys: ['c'] }],
  RowAttrsSet: [{ type: 'RowAttrsSet', index: 'i', field: 'f', row: 1, attrs: { x: 2n } }],
  ColumnAttrsSet: [{ type: 'ColumnAttrsSet', index: 'i', column: 1, attrs: { y: null } }],
  BitDepthRaised: [{ type: 'BitDepthRaised', index: 'i', field: 'n', bitDepth: 40 }],
  KafkaOffsetsCommitted: [
    {
      type: 'KafkaOffsetsCommitted',
      ingest: 'in',
      topic: 't',
      partitions: [0],
      offsets: ['11'],
      records: 1,
      deadLettered: 0,
    },
  ],
  IngestDefined: [{ type: 'IngestDefined', name: 'in', spec: '{"topic":"t"}', paused: true }],
  IngestDeleted: [{ type: 'IngestDeleted', name: 'in' }],
  LegacyMetaSet: [{ type: 'LegacyMetaSet', index: 'i', key: 'frame:f', value: null }],
  CommandApplied: [{ type: 'CommandApplied', topic: 'log', partition: 1, offset: '4', position: '5', timeMs: 1000 }],
};

/** Smaller changes the digest must also see, per part of the state. */
const SUBTLE: [string, Event][] = [
  [
    'a dead-letter count alone',
    {
      type: 'KafkaOffsetsCommitted',
      ingest: 'in',
      topic: 't',
      partitions: [],
      offsets: [],
      records: 0,
      deadLettered: 1,
    },
  ],
  [
    'an offset of another partition',
    {
      type: 'KafkaOffsetsCommitted',
      ingest: 'in',
      topic: 't',
      partitions: [1],
      offsets: ['0'],
      records: 0,
      deadLettered: 0,
    },
  ],
  ['an ingest spec', { type: 'IngestDefined', name: 'in', spec: '{"topic":"u"}', paused: false }],
  ['a legacy metadata value', { type: 'LegacyMetaSet', index: 'i', key: 'frame:f', value: '{"cacheType":"lru"}' }],
  ['a new legacy metadata key', { type: 'LegacyMetaSet', index: 'i', key: 'timeQuantum', value: 'YMD' }],
  [
    'a cluster position alone',
    { type: 'CommandApplied', topic: 'log', partition: 0, offset: '9', position: '9;10', timeMs: 500 },
  ],
  [
    'a newer command time',
    { type: 'CommandApplied', topic: 'log', partition: 0, offset: '9', position: '10', timeMs: 900 },
  ],
  ['a row key', { type: 'KeysAssigned', index: 'i', field: 'f', firstId: 2, keys: ['r2'] }],
  [
    'existence bits',
    {
      type: 'BitsSet',
      index: 'i',
      field: 'f',
      view: 'standard',
      shard: 0,
      rows: [1],
      columns: [Uint32Array.of(1)],
      exists: true,
    },
  ],
  [
    'a time view',
    {
      type: 'BitsSet',
      index: 'i',
      field: 'f',
      view: 'standard_2020',
      shard: 0,
      rows: [1],
      columns: [Uint32Array.of(1)],
    },
  ],
];

function holderOf(events: readonly Event[]): Holder {
  const h = new Holder();
  for (const e of events) apply(h, e);
  return h;
}

describe('stateDigest', () => {
  const base = stateDigest(holderOf(BASE));

  it.each(Object.entries(CHANGE))('sees a %s event', (_type, change) => {
    expect(stateDigest(holderOf([...BASE, ...change]))).not.toBe(base);
  });

  it.each(SUBTLE)('sees %s', (_what, change) => {
    expect(stateDigest(holderOf([...BASE, change]))).not.toBe(base);
  });

  it('catches a replay that drops LegacyMetaSet events', () => {
    const withoutLegacy = BASE.filter((e) => e.type !== 'LegacyMetaSet');
    expect(stateDigest(holderOf(withoutLegacy))).not.toBe(base);
  });

  it('does not depend on the order in which independent parts were built', () => {
    const parts: Event[] = [
      { type: 'ColumnAttrsSet', index: 'i', column: 9, attrs: { a: 1n } },
      { type: 'LegacyMetaSet', index: 'i', key: 'timeQuantum', value: 'YM' },
      { type: 'IngestDefined', name: 'other', spec: '{}', paused: false },
      {
        type: 'KafkaOffsetsCommitted',
        ingest: 'in',
        topic: 'u',
        partitions: [3],
        offsets: ['1'],
        records: 0,
        deadLettered: 0,
      },
    ];
    expect(stateDigest(holderOf([...BASE, ...parts]))).toBe(stateDigest(holderOf([...BASE, ...[...parts].reverse()])));
  });
});
