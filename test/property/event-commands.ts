// Random write commands for the replay property tests, and the events each decides against the
// current state. Together they produce every event type (EVENT_TYPES below is a Record over
// EventType, so a new type fails to compile here until the generator is taught to make it).
import fc from 'fast-check';
import roaring from 'roaring';
import { defaultFieldOptions, type FieldType } from '../../src/domain/types.js';
import type { Event, EventType } from '../../src/events/types.js';
import type { ReadonlyHolder } from '../../src/state/readonly.js';

const { RoaringBitmap32 } = roaring;

const INDEXES = ['a', 'b'];
/** f and g take the bit types; n is always int. */
const FIELDS = ['f', 'g', 'n'];
const BIT_TYPES: FieldType[] = ['set', 'mutex', 'time', 'bool'];
const INGESTS = ['in1', 'in2'];
const TOPICS = ['t1', 't2'];
const LEGACY_KEYS = ['frame:f', 'timeQuantum', 'input:x'];
const SHARD_WIDTH = 1 << 20;

/** Every event type, with a one-word hint of the command that makes it. */
export const EVENT_TYPES: Record<EventType, string> = {
  IndexCreated: 'index',
  IndexDeleted: 'dropIndex',
  FieldCreated: 'field',
  FieldDeleted: 'dropField',
  FieldOptionsChanged: 'quantum',
  BitsSet: 'bits',
  BitsCleared: 'bits',
  RowCleared: 'clearRow',
  RowStored: 'store',
  ValuesSet: 'values',
  ValuesCleared: 'clearValues',
  KeysAssigned: 'keys',
  RowAttrsSet: 'attrs',
  ColumnAttrsSet: 'attrs',
  BitDepthRaised: 'depth',
  KafkaOffsetsCommitted: 'offsets',
  IngestDefined: 'ingest',
  IngestDeleted: 'dropIngest',
  LegacyMetaSet: 'legacy',
  CommandApplied: 'mark',
};

export type Cmd =
  | { k: 'index'; i: number; track: boolean; keys: boolean }
  | { k: 'dropIndex'; i: number }
  | { k: 'field'; i: number; f: number; t: number; keys: boolean }
  | { k: 'dropField'; i: number; f: number }
  /** A time field's quantum changed by a meta command (cluster mode; q: 0 = Y, 1 = YM, 2 = YMD). */
  | { k: 'quantum'; i: number; f: number; q: number }
  | {
      k: 'bits';
      i: number;
      f: number;
      clear: boolean;
      exists: boolean;
      timeView: boolean;
      shard: number;
      rows: number[];
      cols: number[];
    }
  | { k: 'clearRow'; i: number; f: number; row: number }
  | { k: 'store'; i: number; f: number; row: number; shards: number[]; cols: number[] }
  | { k: 'values'; i: number; shard: number; cols: number[]; vals: bigint[] }
  | { k: 'clearValues'; i: number; shard: number; cols: number[] }
  /** f: -1 = the index's column keys. */
  | { k: 'keys'; i: number; f: number; n: number }
  | { k: 'attrs'; i: number; f: number; id: number; v: number | null }
  | { k: 'depth'; i: number; depth: number }
  | { k: 'ingest'; n: number; paused: boolean; spec: number }
  | { k: 'dropIngest'; n: number }
  | { k: 'offsets'; n: number; topic: number; partitions: number[]; offset: number; records: number; dead: number }
  | { k: 'legacy'; i: number; key: number; value: string | null }
  | { k: 'mark'; p: number; offset: number; timeMs: number }
  | { k: 'snapshot' };

const i = fc.nat(1);
const bitField = fc.nat(1);
const cols = (max: number) => fc.array(fc.nat(2_000_000), { minLength: 1, maxLength: max });

// Weighted so that drops (which reset much of the state) are rarer than writes.
export const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 1, arbitrary: fc.record({ k: fc.constant('index' as const), i, track: fc.boolean(), keys: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('dropIndex' as const), i }) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('field' as const),
      i,
      f: fc.nat(2),
      t: fc.nat(BIT_TYPES.length - 1),
      keys: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('dropField' as const), i, f: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('quantum' as const), i, f: bitField, q: fc.nat(2) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('bits' as const),
      i,
      f: bitField,
      clear: fc.boolean(),
      exists: fc.boolean(),
      timeView: fc.boolean(),
      shard: fc.nat(2),
      rows: fc.array(fc.nat(5), { minLength: 1, maxLength: 3 }),
      cols: cols(20),
    }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('clearRow' as const), i, f: bitField, row: fc.nat(5) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('store' as const),
      i,
      f: bitField,
      row: fc.nat(5),
      shards: fc.uniqueArray(fc.nat(2), { maxLength: 2 }),
      cols: cols(10),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('values' as const),
      i,
      shard: fc.nat(1),
      cols: fc.array(fc.nat(1_000_000), { minLength: 1, maxLength: 10 }),
      vals: fc.array(fc.bigInt({ min: -(1n << 62n), max: 1n << 62n }), { minLength: 10, maxLength: 10 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('clearValues' as const),
      i,
      shard: fc.nat(1),
      cols: fc.array(fc.nat(1_000_000), { minLength: 1, maxLength: 10 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('keys' as const),
      i,
      f: fc.integer({ min: -1, max: 1 }),
      n: fc.integer({ min: 1, max: 4 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('attrs' as const),
      i,
      f: fc.nat(2),
      id: fc.nat(10),
      v: fc.option(fc.integer(), { nil: null }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('depth' as const), i, depth: fc.integer({ min: 1, max: 63 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant('ingest' as const), n: fc.nat(1), paused: fc.boolean(), spec: fc.nat(3) }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('dropIngest' as const), n: fc.nat(1) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('offsets' as const),
      n: fc.nat(1),
      topic: fc.nat(1),
      partitions: fc.uniqueArray(fc.nat(3), { maxLength: 3 }),
      offset: fc.nat(1_000_000),
      records: fc.nat(100),
      dead: fc.nat(5),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('legacy' as const),
      i,
      key: fc.nat(LEGACY_KEYS.length - 1),
      value: fc.option(fc.string({ maxLength: 12 }), { nil: null }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('mark' as const),
      p: fc.integer({ min: -1, max: 2 }),
      offset: fc.nat(1_000_000),
      timeMs: fc.nat(2_000_000_000_000),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ k: 'snapshot' as const }) },
);

/** Turns a command into events valid for the current state (or none). */
export function decide(h: ReadonlyHolder, c: Cmd, counter: { n: number }): Event[] {
  switch (c.k) {
    case 'snapshot':
      return [];
    case 'ingest':
      return [
        {
          type: 'IngestDefined',
          name: INGESTS[c.n],
          spec: JSON.stringify({ topic: TOPICS[c.spec % 2], version: c.spec }),
          paused: c.paused,
        },
      ];
    case 'mark':
      return [
        {
          type: 'CommandApplied',
          topic: c.p < 0 ? 'meta' : 'log',
          partition: Math.max(0, c.p),
          offset: String(c.offset),
          position: `${c.offset + 1}`,
          timeMs: c.timeMs,
        },
      ];
    case 'dropIngest':
      return h.ingests.has(INGESTS[c.n]) ? [{ type: 'IngestDeleted', name: INGESTS[c.n] }] : [];
    case 'offsets': {
      if (!h.ingests.has(INGESTS[c.n]))
        return [{ type: 'IngestDefined', name: INGESTS[c.n], spec: '{"topic":"t1"}', paused: true }];
      const offsets = c.partitions.map((p) => String(c.offset + p));
      return [
        {
          type: 'KafkaOffsetsCommitted',
          ingest: INGESTS[c.n],
          topic: c.partitions.length > 0 ? TOPICS[c.topic] : '',
          partitions: c.partitions,
          offsets,
          records: c.records,
          deadLettered: c.dead,
        },
      ];
    }
    default:
      return decideIndexed(h, c, counter);
  }
}

function decideIndexed(
  h: ReadonlyHolder,
  c: Exclude<Cmd, { k: 'snapshot' | 'ingest' | 'dropIngest' | 'offsets' | 'mark' }>,
  counter: { n: number },
): Event[] {
  const index = INDEXES[c.i];
  const idx = h.index(index);
  if (c.k === 'index')
    return idx ? [] : [{ type: 'IndexCreated', index, options: { keys: c.keys, trackExistence: c.track } }];
  if (c.k === 'dropIndex') return idx ? [{ type: 'IndexDeleted', index }] : [];
  // A command on a missing index or field creates it instead, so random runs reach deep states.
  if (!idx) return [{ type: 'IndexCreated', index, options: { keys: c.i === 1, trackExistence: true } }];
  const wanted =
    'f' in c ? (FIELDS[c.f] ?? '') : c.k === 'values' || c.k === 'clearValues' || c.k === 'depth' ? 'n' : '';
  if (wanted !== '' && !idx.field(wanted)) {
    const type = wanted === 'n' ? 'int' : BIT_TYPES[c.k === 'field' ? c.t : counter.n++ % BIT_TYPES.length];
    const options = {
      ...defaultFieldOptions(type),
      keys: type !== 'int' && (c.k === 'field' ? c.keys : c.i === 1),
      ...(type === 'time' ? { timeQuantum: 'YMD' } : {}),
    };
    return [{ type: 'FieldCreated', index, field: wanted, options }];
  }
  const fieldOf = (f: number) => idx.field(FIELDS[f]);
  switch (c.k) {
    case 'field':
      return [];
    case 'dropField':
      return fieldOf(c.f) ? [{ type: 'FieldDeleted', index, field: FIELDS[c.f] }] : [];
    case 'quantum': {
      const field = fieldOf(c.f);
      if (field?.options.type !== 'time') return [];
      // Meta offsets only grow: after the field's last change.
      const meta = String(BigInt(field.priorOptions.at(-1)?.until ?? '0') + 1n + BigInt(counter.n++));
      const options = { ...field.options, timeQuantum: ['Y', 'YM', 'YMD'][c.q] };
      return [{ type: 'FieldOptionsChanged', index, field: field.name, options, meta }];
    }
    case 'bits': {
      const field = fieldOf(c.f);
      if (!field) return [];
      const view = c.timeView && field.options.type === 'time' ? 'standard_2021' : 'standard';
      const rows = [...new Set(c.rows)];
      const columns = rows.map(() => Uint32Array.from(new Set(c.cols.map((x) => x % SHARD_WIDTH))).sort());
      if (c.clear) return [{ type: 'BitsCleared', index, field: field.name, view, shard: c.shard, rows, columns }];
      return [
        {
          type: 'BitsSet',
          index,
          field: field.name,
          view,
          shard: c.shard,
          rows,
          columns,
          ...(c.exists ? { exists: true } : {}),
        },
      ];
    }
    case 'clearRow':
      return fieldOf(c.f) ? [{ type: 'RowCleared', index, field: FIELDS[c.f], row: c.row }] : [];
    case 'store': {
      if (!fieldOf(c.f)) return [];
      const columns = c.shards.map(() => new RoaringBitmap32(c.cols.map((x) => x % SHARD_WIDTH)));
      return [
        { type: 'RowStored', index, field: FIELDS[c.f], view: 'standard', row: c.row, shards: c.shards, columns },
      ];
    }
    case 'values':
    case 'clearValues': {
      if (!idx.field('n')) return [];
      const m = new Map<number, bigint>();
      c.cols.forEach((col, j) => m.set(col, c.k === 'values' ? c.vals[j] : 0n));
      const columns = Uint32Array.from(m.keys());
      if (c.k === 'clearValues') return [{ type: 'ValuesCleared', index, field: 'n', shard: c.shard, columns }];
      return [
        { type: 'ValuesSet', index, field: 'n', shard: c.shard, columns, values: BigInt64Array.from(m.values()) },
      ];
    }
    case 'depth':
      return idx.field('n') ? [{ type: 'BitDepthRaised', index, field: 'n', bitDepth: c.depth }] : [];
    case 'keys': {
      const field = c.f < 0 ? '' : FIELDS[c.f];
      // Read without rowKeysFor: deciding must not change the state.
      const firstId = field === '' ? idx.columnKeys.nextId : (idx.rowKeys.get(field)?.nextId ?? 1);
      const keys = Array.from({ length: c.n }, () => `k${counter.n++}`);
      return [{ type: 'KeysAssigned', index, field, firstId, keys }];
    }
    case 'attrs': {
      const field = FIELDS[c.f];
      const v = c.v === null ? null : BigInt(c.v);
      return [
        { type: 'RowAttrsSet', index, field, row: c.id, attrs: { x: v, s: c.v === null ? null : `v${c.v}` } },
        {
          type: 'ColumnAttrsSet',
          index,
          column: c.id,
          attrs: { flag: c.v === null ? null : c.v > 0, f: c.v === null ? null : c.v / 2 },
        },
      ];
    }
    case 'legacy':
      return [{ type: 'LegacyMetaSet', index, key: LEGACY_KEYS[c.key], value: c.value }];
  }
}
