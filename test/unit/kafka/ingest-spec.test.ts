// Ingest definitions without a broker: parsing/normalizing a definition body and checking it
// against the schema (src/kafka/ingest-spec.ts).
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/domain/errors.js';
import { parseIngestSpec, validateAgainstSchema, type IngestSpec } from '../../../src/kafka/ingest-spec.js';
import { expectBadRequest } from '../../helpers/errors.js';
import { ingestSchema } from './ingest-schema.js';

const base = {
  topic: 'events',
  index: 'i',
  column: { field: 'id' },
  fields: [{ name: 'color', field: 'color', mapping: 'value-to-row' }],
};

const spec = (over: Record<string, unknown> = {}): IngestSpec => parseIngestSpec('ing', { ...base, ...over });

describe('parseIngestSpec', () => {
  it('fills the defaults and normalizes the legacy names', () => {
    const s = parseIngestSpec('ing', {
      ...base,
      fields: [
        { name: 'when', field: 'cat', mapping: 'set-timestamp' },
        { name: 'active', field: 'flag', mapping: 'single-row-boolean', rowid: '1' },
        { name: 'c', field: 'grp', mapping: 'mapping', valueMap: { red: 1, blue: '2' } },
      ],
    });
    expect(s).toEqual({
      topic: 'events',
      index: 'i',
      unmappedProperties: 'dead-letter',
      deadLetterWarnRatio: 0.1,
      column: { field: 'id' },
      fields: [
        { name: 'when', field: 'cat', mapping: 'timestamp' },
        { name: 'active', field: 'flag', mapping: 'single-row-boolean', rowID: 1 },
        { name: 'c', field: 'grp', mapping: 'mapping', valueMap: { red: 1, blue: 2 } },
      ],
      deadLetterTopic: 'events.dlq',
      group: 'bitledger-ingest-ing',
      batchMessages: 20_000,
    });
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['an unknown top-level key', { extra: 1 }, /unknown key in ingest definition: extra/],
    ['a bad topic name', { topic: 'a b' }, /invalid topic name: a b/],
    ['a missing index', { index: '' }, /index must be a non-empty string/],
    ['both column forms', { column: { field: 'id', key: 'k' } }, /exactly one of field/],
    ['neither column form', { column: {} }, /exactly one of field/],
    ['no fields', { fields: [] }, /fields must be a non-empty array/],
    ['an unknown mapping', { fields: [{ name: 'a', field: 'a', mapping: 'guess' }] }, /invalid mapping: guess/],
    ['mapping without valueMap', { fields: [{ name: 'a', field: 'a', mapping: 'mapping' }] }, /valueMap required/],
    [
      'valueMap on another mapping',
      { fields: [{ name: 'a', field: 'a', mapping: 'int', valueMap: {} }] },
      /valueMap is only for mapping/,
    ],
    [
      'a negative valueMap row',
      { fields: [{ name: 'a', field: 'a', mapping: 'mapping', valueMap: { x: -1 } }] },
      /valueMap.x must be a non-negative integer/,
    ],
    [
      'single-row-boolean without rowID',
      { fields: [{ name: 'a', field: 'a', mapping: 'single-row-boolean' }] },
      /rowID required/,
    ],
    [
      'rowID on another mapping',
      { fields: [{ name: 'a', field: 'a', mapping: 'value-to-row', rowID: 1 }] },
      /rowID is only for single-row-boolean/,
    ],
    ['the column property as a field', { fields: [{ name: 'id', field: 'a', mapping: 'int' }] }, /is the column/],
    [
      'two booleans on one row',
      {
        fields: [
          { name: 'a', field: 'f', mapping: 'single-row-boolean', rowID: 2 },
          { name: 'b', field: 'f', mapping: 'single-row-boolean', rowID: 2 },
        ],
      },
      /duplicate rowID with other field: a and b/,
    ],
    ['a dead-letter topic equal to the topic', { deadLetterTopic: 'events' }, /must differ from topic/],
    ['batchMessages out of range', { batchMessages: 0 }, /batchMessages must be between 1 and/],
    [
      'an unknown field key',
      { fields: [{ name: 'a', field: 'a', mapping: 'int', weight: 1 }] },
      /unknown key in fields\[0\]: weight/,
    ],
  ])('refuses %s', (_what, over, message) => {
    expectBadRequest(() => spec(over), message);
  });

  it('refuses an invalid ingest name', () => {
    expect(() => parseIngestSpec('Bad Name', base)).toThrow(DomainError);
  });
});

describe('validateAgainstSchema', () => {
  const h = ingestSchema();
  const fields = (...f: Record<string, unknown>[]): Record<string, unknown> => ({ fields: f });

  it('accepts every mapping on a field that suits it', () => {
    const s = spec(
      fields(
        { name: 'c', field: 'color', mapping: 'value-to-row' },
        { name: 'g', field: 'grp', mapping: 'mapping', valueMap: { a: 1 } },
        { name: 'b', field: 'flag', mapping: 'single-row-boolean', rowID: 1 },
        { name: 'a', field: 'age', mapping: 'int' },
        { name: 't', field: 'cat', mapping: 'value-to-row' },
        { name: 'when', field: 'cat', mapping: 'timestamp' },
        { name: 'tag', field: 'tag', mapping: 'value-to-row' },
      ),
    );
    expect(() => validateAgainstSchema(s, h)).not.toThrow();
    expect(() => validateAgainstSchema(spec({ index: 'k', column: { key: 'user' } }), h)).not.toThrow();
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'int on a set field',
      fields({ name: 'a', field: 'color', mapping: 'int' }),
      /mapping int needs an int field; color is set/,
    ],
    [
      'another mapping on an int field',
      fields({ name: 'a', field: 'age', mapping: 'value-to-row' }),
      /int field age takes mapping int/,
    ],
    [
      'timestamp on a non-time field',
      fields(
        { name: 'w', field: 'color', mapping: 'timestamp' },
        { name: 'c', field: 'color', mapping: 'value-to-row' },
      ),
      /mapping timestamp needs a time field/,
    ],
    [
      'a timestamp with nothing to stamp',
      fields({ name: 'w', field: 'cat', mapping: 'timestamp' }),
      /no property sets bits in cat/,
    ],
    [
      'two timestamps for one field',
      fields(
        { name: 'w', field: 'cat', mapping: 'timestamp' },
        { name: 'v', field: 'cat', mapping: 'timestamp' },
        { name: 'c', field: 'cat', mapping: 'value-to-row' },
      ),
      /more than one timestamp property for field cat/,
    ],
    [
      'mapping on a keyed field',
      fields({ name: 'a', field: 'tag', mapping: 'mapping', valueMap: { x: 1 } }),
      /string row keys/,
    ],
    [
      'row 2 of a bool field',
      fields({ name: 'a', field: 'flag', mapping: 'single-row-boolean', rowID: 2 }),
      /bool field flag takes rows 0 and 1/,
    ],
    ['column.key on an integer-column index', { column: { key: 'user' } }, /column.key needs an index with keys/],
    ['column.field on a keyed index', { index: 'k' }, /has string keys: use column.key/],
  ])('refuses %s', (_what, over, message) => {
    expectBadRequest(() => validateAgainstSchema(spec(over), h), message);
  });

  it('answers 404 for a missing index or field, and for hidden fields', () => {
    for (const over of [
      { index: 'nope' },
      fields({ name: 'a', field: 'nope', mapping: 'int' }),
      fields({ name: 'a', field: '_exists', mapping: 'value-to-row' }),
    ]) {
      const err = (() => {
        try {
          validateAgainstSchema(spec(over), h);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).code).toBe('not_found');
    }
  });
});
