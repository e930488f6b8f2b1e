// The event registry (src/events/registry.ts): the type codes are the log format's and never
// change; every event type round-trips through its entry; and the snapshot roles are what the
// snapshot writer (src/events/state-events.ts) really writes, so a cluster restore's composition
// (src/engine/compose-base.ts) keeps and drops the right records; every type, decoded from its
// record, applies to the same state as its original.
import { describe, expect, it } from 'vitest';
import { defaultFieldOptions } from '../../../src/domain/types.js';
import { decodeEvent, encodeEvent } from '../../../src/events/codec.js';
import { EVENT_KINDS, EVENT_TYPE_CODES, KIND_BY_CODE } from '../../../src/events/registry.js';
import type { Event, EventType } from '../../../src/events/types.js';
import { RoaringBitmap32 } from '../../../src/roaring/bitmap.js';
import { apply } from '../../../src/events/apply.js';
import { stateDigest } from '../../../src/state/digest.js';
import { Holder } from '../../../src/state/holder.js';
import { stateEvents } from '../../../src/events/state-events.js';

/** The log format's type bytes as written since each event was added (append-only). */
const CODES: Record<EventType, number> = {
  IndexCreated: 1,
  IndexDeleted: 2,
  FieldCreated: 3,
  FieldDeleted: 4,
  BitsSet: 5,
  BitsCleared: 6,
  RowCleared: 7,
  RowStored: 8,
  ValuesSet: 9,
  ValuesCleared: 10,
  KeysAssigned: 11,
  RowAttrsSet: 12,
  ColumnAttrsSet: 13,
  KafkaOffsetsCommitted: 14,
  BitDepthRaised: 15,
  IngestDefined: 16,
  IngestDeleted: 17,
  LegacyMetaSet: 18,
  CommandApplied: 19,
  FieldOptionsChanged: 20,
};

/** A state with something of every kind a snapshot carries, built by events of every type. */
const building: Event[] = [
  { type: 'IndexCreated', index: 'i', options: { keys: true, trackExistence: true }, meta: '7' },
  { type: 'FieldCreated', index: 'i', field: 'f', options: defaultFieldOptions('set') },
  { type: 'FieldCreated', index: 'i', field: 'n', options: defaultFieldOptions('int') },
  { type: 'FieldCreated', index: 'i', field: 'gone', options: defaultFieldOptions('set') },
  { type: 'FieldCreated', index: 'i', field: 't', options: { ...defaultFieldOptions('time'), timeQuantum: 'Y' } },
  {
    type: 'FieldOptionsChanged',
    index: 'i',
    field: 't',
    options: { ...defaultFieldOptions('time'), timeQuantum: 'YMD' },
    meta: '12',
  },
  {
    type: 'BitsSet',
    index: 'i',
    field: 'f',
    view: 'standard',
    shard: 1,
    rows: [1, 2],
    columns: [Uint32Array.of(3, 4), new RoaringBitmap32([5])],
    exists: true,
  },
  { type: 'BitsCleared', index: 'i', field: 'f', view: 'standard', shard: 1, rows: [1], columns: [Uint32Array.of(4)] },
  {
    type: 'RowStored',
    index: 'i',
    field: 'f',
    view: 'standard',
    row: 9,
    shards: [0],
    columns: [new RoaringBitmap32([1])],
  },
  { type: 'RowCleared', index: 'i', field: 'f', row: 9 },
  {
    type: 'ValuesSet',
    index: 'i',
    field: 'n',
    shard: 0,
    columns: Uint32Array.of(1, 2),
    values: BigInt64Array.of(5n, -3n),
  },
  { type: 'ValuesCleared', index: 'i', field: 'n', shard: 0, columns: Uint32Array.of(2) },
  { type: 'BitDepthRaised', index: 'i', field: 'n', bitDepth: 9 },
  { type: 'KeysAssigned', index: 'i', field: '', firstId: 1, keys: ['a', 'b'] },
  { type: 'RowAttrsSet', index: 'i', field: 'f', row: 1, attrs: { color: 'red', n: 3n } },
  { type: 'ColumnAttrsSet', index: 'i', column: 3, attrs: { ok: true, w: 1.5 } },
  { type: 'LegacyMetaSet', index: 'i', key: 'frame:f', value: '{"cacheSize":5}' },
  { type: 'IngestDefined', name: 'k', spec: '{}', paused: false },
  { type: 'IngestDefined', name: 'gone', spec: '{}', paused: true },
  { type: 'IngestDeleted', name: 'gone' },
  {
    type: 'KafkaOffsetsCommitted',
    ingest: 'k',
    topic: 't',
    partitions: [0, 1],
    offsets: ['5', '9'],
    records: 3,
    deadLettered: 1,
  },
  { type: 'CommandApplied', topic: 'log', partition: 2, offset: '41', position: 'p', timeMs: 1_700_000_000_000 },
  { type: 'FieldDeleted', index: 'i', field: 'gone' },
  { type: 'IndexCreated', index: 'j', options: { keys: false, trackExistence: false } },
  { type: 'IndexDeleted', index: 'j' },
];

describe('event registry', () => {
  it('keeps every type code of the log format', () => {
    expect(EVENT_TYPE_CODES).toEqual(CODES);
    expect(KIND_BY_CODE.size).toBe(Object.keys(CODES).length);
  });

  it('round-trips every event type through its entry', () => {
    const types = new Set(building.map((e) => e.type));
    expect([...types].sort()).toEqual(Object.keys(EVENT_KINDS).sort());
    for (const e of building) {
      const r = encodeEvent(e);
      expect(r.type).toBe(CODES[e.type]);
      expect(encodeEvent(decodeEvent(r.type, r.payload))).toEqual(r);
    }
  });

  it('applies every event type as decoded from its record to the state its original makes', () => {
    const original = new Holder();
    const decoded = new Holder();
    for (const e of building) {
      apply(original, e);
      const r = encodeEvent(e);
      apply(decoded, decodeEvent(r.type, r.payload));
    }
    expect(stateDigest(decoded)).toBe(stateDigest(original));
    expect(original.indexes.get('i')?.legacyMeta.get('frame:f')).toBe('{"cacheSize":5}');
  });

  it('gives each type the snapshot role the snapshot writer follows', () => {
    const h = new Holder();
    for (const e of building) apply(h, e);
    const written = new Set<EventType>();
    for (const item of stateEvents(h)) written.add(item.type === 'Fragment' ? 'BitsSet' : item.type);
    const roles = Object.entries(EVENT_KINDS) as [EventType, { snapshot: string }][];
    const inSnapshots = roles.filter(([, k]) => k.snapshot !== 'never').map(([t]) => t);
    expect([...written].sort()).toEqual(inSnapshots.sort());
    expect(EVENT_KINDS.CommandApplied.snapshot).toBe('mark');
  });
});
