// JSON records → import requests without a broker (src/kafka/ingest-mapper.ts): every mapping
// kind, keys, timestamps on time fields, int values, and the reasons a record is dead-lettered
// (a rejected record adds nothing, the records around it still do).
import { describe, expect, it } from 'vitest';
import { parseIngestSpec, type IngestSpec } from '../../../src/kafka/ingest-spec.js';
import { ImportBuilder, resolveTargets, type Targets } from '../../../src/kafka/ingest-mapper.js';
import { apply } from '../../../src/events/apply.js';
import { ingestSchema } from './ingest-schema.js';

const FIELDS = [
  { name: 'color', field: 'color', mapping: 'value-to-row' },
  { name: 'tag', field: 'tag', mapping: 'value-to-row' },
  { name: 'grp', field: 'grp', mapping: 'mapping', valueMap: { red: 1, blue: 2, '7': 3 } },
  { name: 'active', field: 'flag', mapping: 'single-row-boolean', rowID: 1 },
  { name: 'cat', field: 'cat', mapping: 'value-to-row' },
  { name: 'when', field: 'cat', mapping: 'timestamp' },
  { name: 'age', field: 'age', mapping: 'int' },
];

function builder(
  index: 'i' | 'k' = 'i',
  fields: Record<string, unknown>[] = FIELDS,
): { b: ImportBuilder; spec: IngestSpec; targets: Targets } {
  const spec = parseIngestSpec('ing', {
    topic: 't',
    index,
    column: index === 'i' ? { field: 'id' } : { key: 'user' },
    fields,
  });
  const targets = resolveTargets(spec, ingestSchema());
  if (typeof targets === 'string') throw new Error(targets);
  return { b: new ImportBuilder(spec, targets), spec, targets };
}

interface Rejected {
  reason: string;
  index: number;
}

function add(b: ImportBuilder, value: unknown, raw?: string): { added: number; rejected: Rejected[] } {
  const rejected: Rejected[] = [];
  const added = b.add(raw !== undefined ? Buffer.from(raw) : Buffer.from(JSON.stringify(value)), (reason, index) =>
    rejected.push({ reason, index }),
  );
  return { added, rejected };
}

/** The bits of one field as [row, column, timestamp] triples (IDs or keys). */
function bitsOf(b: ImportBuilder, field: string): [number | string, number | string, bigint][] {
  const imp = b.build().bits.find((x) => x.field === field);
  if (imp === undefined) return [];
  const rows: (number | string)[] = imp.rowKeys.length > 0 ? imp.rowKeys : [...imp.rowIds];
  const cols: (number | string)[] = imp.columnKeys.length > 0 ? imp.columnKeys : [...imp.columnIds].map(Number);
  return rows.map((r, i) => [r, cols[i], imp.timestamps?.[i] ?? 0n]);
}

const NS_PER_MS = 1_000_000n;

describe('ImportBuilder: mappings', () => {
  it('maps each kind into the import request of its field', () => {
    const { b } = builder();
    const r = add(b, {
      id: 10.9,
      color: [3, 4],
      tag: 'vip',
      grp: 'blue',
      active: true,
      cat: 5,
      when: '2021-03-04T05:06',
      age: 42,
    });
    expect(r).toEqual({ added: 1, rejected: [] });
    expect(bitsOf(b, 'color')).toEqual([
      [3, 10, 0n],
      [4, 10, 0n],
    ]); // value-to-row, an array sets several rows; the column number is truncated
    expect(bitsOf(b, 'tag')).toEqual([['vip', 10, 0n]]); // keyed field: the value is the row key
    expect(bitsOf(b, 'grp')).toEqual([[2, 10, 0n]]); // mapping via valueMap
    expect(bitsOf(b, 'flag')).toEqual([[1, 10, 0n]]); // single-row-boolean sets rowID
    expect(bitsOf(b, 'cat')).toEqual([[5, 10, BigInt(Date.UTC(2021, 2, 4, 5, 6)) * NS_PER_MS]]); // legacy timestamp
    const { values } = b.build();
    expect(values).toHaveLength(1);
    expect(values[0]).toMatchObject({ index: 'i', field: 'age', columnKeys: [], clear: false });
    expect([...values[0].columnIds]).toEqual([10]);
    expect([...values[0].values]).toEqual([42n]);
  });

  it('takes RFC 3339 timestamps, applies them to every bit of their field only, and none without one', () => {
    const { b } = builder();
    add(b, { id: 1, cat: [1, 2], color: 9, when: '2022-01-02T03:04:05Z' });
    add(b, { id: 2, cat: 3 });
    const t = BigInt(Date.parse('2022-01-02T03:04:05Z')) * NS_PER_MS;
    expect(bitsOf(b, 'cat')).toEqual([
      [1, 1, t],
      [2, 1, t],
      [3, 2, 0n],
    ]);
    expect(b.build().bits.find((x) => x.field === 'color')?.timestamps).toBeNull();
  });

  it('false for a single-row-boolean and null values set nothing; valueMap takes numbers as strings', () => {
    const { b } = builder();
    expect(add(b, { id: 1, active: false, color: null, grp: 7 }).added).toBe(1);
    expect(bitsOf(b, 'flag')).toEqual([]);
    expect(bitsOf(b, 'color')).toEqual([]);
    expect(bitsOf(b, 'grp')).toEqual([[3, 1, 0n]]);
  });

  it('uses column keys on a keyed index, for bits and int values', () => {
    const { b } = builder('k');
    expect(add(b, { user: 'ann', color: 1, age: 30 }).added).toBe(1);
    expect(bitsOf(b, 'color')).toEqual([[1, 'ann', 0n]]);
    const v = b.build().values[0];
    expect(v.columnKeys).toEqual(['ann']);
    expect(v.columnIds).toHaveLength(0);
  });

  it('takes an array of records in one message, and int values beyond 2^53 as decimal strings', () => {
    const { b: withBig } = builder('i', [{ name: 'n', field: 'big', mapping: 'int' }]);
    expect(
      add(withBig, [
        { id: 1, n: '9007199254740993' },
        { id: 2, n: -5 },
      ]).added,
    ).toBe(2);
    expect([...withBig.build().values[0].values]).toEqual([9007199254740993n, -5n]);
  });
});

describe('ImportBuilder: dead-letter reasons', () => {
  it.each<[string, string, RegExp]>([
    ['an empty message', '', /^empty message$/],
    ['invalid JSON', '{"id":', /^invalid JSON: /],
    ['a record that is not an object', '42', /^record is not a JSON object$/],
    ['a missing column', '{"color":1}', /^column id must be a non-negative number$/],
    ['a negative column', '{"id":-1,"color":1}', /^column id must be a non-negative number$/],
    ['a string column on an integer index', '{"id":"7","color":1}', /^column id must be a non-negative number$/],
    [
      'an unknown property',
      '{"id":1,"shape":"round"}',
      /^field not found: shape \(no field maps this property; set "unmappedProperties": "ignore"/,
    ],
    ['a value not in valueMap', '{"id":1,"grp":"green"}', /^grp: value "green" is not in valueMap$/],
    ['an inherited valueMap key', '{"id":1,"grp":"constructor"}', /is not in valueMap/],
    [
      'a non-boolean for single-row-boolean',
      '{"id":1,"active":"yes"}',
      /^active: single-row-boolean needs true or false/,
    ],
    ['a negative row ID', '{"id":1,"color":-2}', /^color: row ID must be a non-negative integer/],
    ['a fractional row ID', '{"id":1,"color":1.5}', /^color: row ID must be a non-negative integer/],
    ['a number for a keyed field', '{"id":1,"tag":5}', /^tag: row key must be a non-empty string$/],
    ['an int out of the field range', '{"id":1,"age":151}', /^age: value 151 out of range \[0, 150\]$/],
    ['a non-integer int value', '{"id":1,"age":1.5}', /^age: int value must be an integer/],
    ['a bad timestamp', '{"id":1,"cat":1,"when":"yesterday"}', /^when: invalid timestamp: yesterday$/],
    ['a numeric timestamp', '{"id":1,"cat":1,"when":12}', /^when: timestamp must be a string/],
    [
      'a timestamp past int64 nanoseconds',
      '{"id":1,"cat":1,"when":"2263-01-01T00:00"}',
      /^when: timestamp 2263-01-01T00:00 is after 2262-04-11/,
    ],
  ])('rejects %s', (_what, raw, reason) => {
    const { b } = builder();
    const r = add(b, undefined, raw);
    expect(r.added).toBe(0);
    expect(r.rejected).toHaveLength(1);
    expect(r.rejected[0].reason).toMatch(reason);
    expect(b.build()).toEqual({ bits: [], values: [] });
  });

  it('rejects a bool row above 1 and a key on a keyed index that is not a string', () => {
    const { b } = builder('i', [{ name: 'f', field: 'flag', mapping: 'value-to-row' }]);
    expect(add(b, { id: 1, f: 2 }).rejected[0].reason).toBe('f: a bool field takes rows 0 and 1, got 2');
    const { b: k } = builder('k');
    expect(add(k, { user: 3, color: 1 }).rejected[0].reason).toBe('column key user must be a non-empty string');
  });

  it('rolls a rejected record back whole and keeps the records around it, with their index in the message', () => {
    const { b } = builder();
    const r = add(b, [
      { id: 1, color: 1, age: 10 },
      { id: 2, color: 2, age: 20, grp: 'green' }, // color and age were added before grp failed
      { id: 3, color: 3, cat: 4, when: '2020-01-01T00:00', age: 999 },
      { id: 4, color: 4 },
    ]);
    expect(r.added).toBe(2);
    expect(r.rejected.map((x) => x.index)).toEqual([1, 2]);
    expect(bitsOf(b, 'color')).toEqual([
      [1, 1, 0n],
      [4, 4, 0n],
    ]);
    expect(bitsOf(b, 'cat')).toEqual([]);
    expect([...b.build().values[0].values]).toEqual([10n]);
    expect([...b.build().values[0].columnIds]).toEqual([1]);
  });
});

describe('resolveTargets', () => {
  it('says why a definition no longer fits the schema', () => {
    const { spec } = builder();
    const h = ingestSchema();
    apply(h, { type: 'FieldDeleted', index: 'i', field: 'age' });
    expect(resolveTargets(spec, h)).toBe('field i/age no longer exists');
    apply(h, {
      type: 'FieldCreated',
      index: 'i',
      field: 'age',
      options: {
        type: 'set',
        cacheType: 'none',
        cacheSize: 0,
        keys: false,
        min: 0n,
        max: 0n,
        timeQuantum: '',
        noStandardView: false,
      },
    });
    expect(resolveTargets(spec, h)).toBe('field age changed type to set');
    apply(h, { type: 'IndexDeleted', index: 'i' });
    expect(resolveTargets(spec, h)).toBe('index i no longer exists');
  });

  it('groups several properties feeding one field into one target', () => {
    const { targets } = builder();
    expect(targets.list.map((t) => t.field)).toEqual(['color', 'tag', 'grp', 'flag', 'cat', 'age']);
    expect(targets.byProp.get('when')?.[0].target).toBe(targets.byProp.get('cat')?.[0].target);
  });
});
