import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { type AttrMap, INT64_MAX, INT64_MIN } from '../../../src/domain/types.js';
import { attrsJson } from '../../../src/encoding/query-json.js';
import {
  decodeImportResponse,
  decodeImportRoaringRequest,
  decodeQueryRequest,
  decodeQueryResponse,
  decodeTranslateKeysRequest,
  decodeTranslateKeysResponse,
  encodeImportResponse,
  encodeImportRoaringRequest,
  encodeQueryRequest,
  encodeQueryResponse,
  encodeTranslateKeysRequest,
  encodeTranslateKeysResponse,
} from '../../../src/encoding/public-proto.js';
import type { QueryResponse, QueryResult } from '../../../src/executor/result.js';
import { expectBadRequest } from '../../helpers/errors.js';

// Reference encoder: protobufjs reflection over the same .proto. It too writes fields in number
// order and omits proto3 defaults, like Go, so equal bytes mean Pilosa-compatible framing.
const root = new protobuf.Root().loadSync(fileURLToPath(new URL('../../../proto/public.proto', import.meta.url)), {
  keepCase: true,
});
const PbQueryResponse = root.lookupType('internal.QueryResponse');
const PbQueryRequest = root.lookupType('internal.QueryRequest');

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const fromHex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s.replace(/\s/g, ''), 'hex'));

describe('encodeQueryResponse', () => {
  it('matches the bytes observed from Pilosa 1.4 (docs/API.md §2)', () => {
    expect(hex(encodeQueryResponse({ results: [{ type: 'count', n: 2 }] }))).toBe('120410023004');
    expect(hex(encodeQueryResponse({ results: [{ type: 'row', columns: [1], attrs: {} }] }))).toBe(
      '12070a030a01013001',
    );
  });

  it('omits proto3 defaults but keeps the Row / ValCount submessages, as Go does', () => {
    expect(hex(encodeQueryResponse({ results: [] }))).toBe('');
    expect(hex(encodeQueryResponse({ results: [{ type: 'count', n: 0 }] }))).toBe('12023004');
    expect(hex(encodeQueryResponse({ results: [{ type: 'null' }] }))).toBe('1200');
    expect(hex(encodeQueryResponse({ results: [{ type: 'row', columns: [], attrs: {} }] }))).toBe('12040a003001');
    expect(hex(encodeQueryResponse({ results: [{ type: 'changed', changed: false }] }))).toBe('12023005');
    expect(hex(encodeQueryResponse({ results: [{ type: 'changed', changed: true }] }))).toBe('120420013005');
    expect(hex(encodeQueryResponse({ results: [{ type: 'valcount', value: 0n, count: 0 }] }))).toBe('12042a003003');
    expect(hex(encodeQueryResponse({ err: 'boom' }))).toBe('0a04626f6f6d');
    expect(hex(encodeQueryResponse({ err: '' }))).toBe('');
  });

  const attrs = { z: 1.5, a: -5n, b: true, c: 'x', n: INT64_MIN, f0: 0, '\u{1F600}': 'astral', '\uFFFD': 'bmp' };
  // Go's sort.Strings is UTF-8 byte order: U+FFFD (ef bf bd) sorts before U+1F600 (f0 9f 98 80).
  const sortedAttrKeys = ['a', 'b', 'c', 'f0', 'n', 'z', '\uFFFD', '\u{1F600}'];
  const pbAttr = (k: string): Record<string, unknown> => {
    const v = attrs[k as keyof typeof attrs];
    if (typeof v === 'string') return { Key: k, Type: 1, StringValue: v };
    if (typeof v === 'bigint') return { Key: k, Type: 2, IntValue: v.toString() };
    if (typeof v === 'boolean') return { Key: k, Type: 3, BoolValue: v };
    return { Key: k, Type: 4, FloatValue: v };
  };

  const everything: QueryResponse = {
    results: [
      { type: 'row', columns: [1, 2 ** 20, 2 ** 40, Number.MAX_SAFE_INTEGER], attrs, keys: ['k1', 'k2'] },
      { type: 'count', n: 2 ** 40 },
      {
        type: 'pairs',
        pairs: [
          { id: 3, count: 10 },
          { id: 0, key: 'x', count: 0 },
        ],
      },
      { type: 'valcount', value: INT64_MIN, count: 3 },
      { type: 'valcount', value: INT64_MAX, count: 1 },
      { type: 'null' },
      {
        type: 'groupcounts',
        groups: [
          {
            group: [
              { field: 'f', rowID: 3 },
              { field: 'g', rowKey: 'k' },
            ],
            count: 7,
          },
        ],
      },
      { type: 'rowids', rows: [0, 5, 2 ** 33], keys: ['a'] },
      { type: 'pair', pair: { id: 9, key: 'kk', count: 4 } },
      { type: 'changed', changed: true },
    ],
    columnAttrs: [
      { id: 5, attrs: { x: 1n } },
      { key: 'col', attrs: { y: 'z' } },
    ],
  };

  it('frames every result type exactly like a reflection encoder', () => {
    const reference = PbQueryResponse.encode({
      Results: [
        {
          Type: 1,
          Row: {
            Columns: [1, 2 ** 20, 2 ** 40, Number.MAX_SAFE_INTEGER],
            Attrs: sortedAttrKeys.map(pbAttr),
            Keys: ['k1', 'k2'],
          },
        },
        { Type: 4, N: 2 ** 40 },
        { Type: 2, Pairs: [{ ID: 3, Count: 10 }, { Key: 'x' }] },
        { Type: 3, ValCount: { Val: INT64_MIN.toString(), Count: 3 } },
        { Type: 3, ValCount: { Val: INT64_MAX.toString(), Count: 1 } },
        {},
        {
          Type: 7,
          GroupCounts: [
            {
              Group: [
                { Field: 'f', RowID: 3 },
                { Field: 'g', RowKey: 'k' },
              ],
              Count: 7,
            },
          ],
        },
        { Type: 8, RowIdentifiers: { Rows: [0, 5, 2 ** 33], Keys: ['a'] } },
        { Type: 9, Pairs: [{ ID: 9, Key: 'kk', Count: 4 }] },
        { Type: 5, Changed: true },
      ],
      ColumnAttrSets: [
        { ID: 5, Attrs: [{ Key: 'x', Type: 2, IntValue: 1 }] },
        { Key: 'col', Attrs: [{ Key: 'y', Type: 1, StringValue: 'z' }] },
      ],
    }).finish();
    expect(hex(encodeQueryResponse(everything))).toBe(hex(reference));
  });

  it('decodes back to the same results', () => {
    expect(decodeQueryResponse(encodeQueryResponse(everything))).toEqual({
      err: '',
      results: everything.results,
      columnAttrs: everything.columnAttrs,
    });
    expect(decodeQueryResponse(encodeQueryResponse({ err: 'bad' }))).toEqual({
      err: 'bad',
      results: [],
      columnAttrs: [],
    });
  });

  it('decodes the internal RowIDs result type (6)', () => {
    const buf = PbQueryResponse.encode({ Results: [{ Type: 6, RowIDs: [1, 2] }] }).finish();
    expect(decodeQueryResponse(buf).results).toEqual([{ type: 'rowids', rows: [1, 2] }]);
  });

  it('keeps an attribute named __proto__ (an own key, as JSON.parse makes it), in protobuf and JSON', () => {
    // The property test below found it: assigning that key replaced the decoded map's prototype.
    const attrs = JSON.parse('{"__proto__": "a", "b": 1}') as AttrMap;
    const results: QueryResult[] = [{ type: 'row', columns: [3], attrs }];
    const back = decodeQueryResponse(encodeQueryResponse({ results }));
    expect(back.results).toEqual(results);
    const row = back.results[0];
    expect(row.type === 'row' && Object.keys(row.attrs)).toEqual(['__proto__', 'b']);
    expect(JSON.stringify(attrsJson(attrs))).toBe('{"__proto__":"a","b":1}');
  });

  it('round-trips rows and counts (property)', () => {
    const result: fc.Arbitrary<QueryResult> = fc.oneof(
      fc.record({
        type: fc.constant('row' as const),
        columns: fc.uniqueArray(fc.maxSafeNat(), { maxLength: 50 }).map((a) => a.sort((x, y) => x - y)),
        attrs: fc.dictionary(
          fc.string({ minLength: 1 }),
          fc.oneof(
            fc.string(),
            fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
            fc.boolean(),
            fc.double({ noNaN: true }).filter((d) => !Object.is(d, -0)),
          ),
        ),
      }),
      fc.record({ type: fc.constant('count' as const), n: fc.maxSafeNat() }),
      fc.record({
        type: fc.constant('valcount' as const),
        value: fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
        count: fc.maxSafeNat(),
      }),
    );
    fc.assert(
      fc.property(fc.array(result, { maxLength: 5 }), (results) => {
        const back = decodeQueryResponse(encodeQueryResponse({ results }));
        expect(back.results).toEqual(results);
      }),
      { numRuns: Number(process.env.PROP_RUNS ?? 100) },
    );
  });
});

describe('decodeQueryRequest', () => {
  it('decodes a client request, ignoring Remote', () => {
    const buf = encodeQueryRequest({
      query: 'Count(Row(f=1))',
      shards: [0, 2, 2 ** 40],
      remote: true,
      excludeColumns: true,
    });
    expect(decodeQueryRequest(buf)).toEqual({
      query: 'Count(Row(f=1))',
      shards: [0, 2, 2 ** 40],
      columnAttrs: false,
      excludeRowAttrs: false,
      excludeColumns: true,
    });
    expect(decodeQueryRequest(new Uint8Array(0))).toEqual({
      query: '',
      shards: [],
      columnAttrs: false,
      excludeRowAttrs: false,
      excludeColumns: false,
    });
  });

  it('accepts unpacked shards and every flag', () => {
    // Query "x", Shards 1 and 3 unpacked (tag 0x10), ColumnAttrs, ExcludeRowAttrs.
    const buf = fromHex('0a0178 1001 1003 1801 3001');
    expect(decodeQueryRequest(buf)).toEqual({
      query: 'x',
      shards: [1, 3],
      columnAttrs: true,
      excludeRowAttrs: true,
      excludeColumns: false,
    });
    expect(PbQueryRequest.decode(buf).toJSON()).toMatchObject({ Query: 'x', ColumnAttrs: true });
  });

  it('rejects malformed bodies and shards beyond 2^53-1', () => {
    expectBadRequest(() => decodeQueryRequest(fromHex('0a05 78')), /^unmarshaling query request: proto: /);
    expectBadRequest(() => decodeQueryRequest(fromHex('0f')), /^unmarshaling query request: /);
    // Shard 2^53, unpacked.
    expectBadRequest(() => decodeQueryRequest(fromHex('10 8080808080808010')), /shard 9007199254740992/);
  });
});

describe('translate keys, import responses, import-roaring requests', () => {
  it('translate keys: request decodes, response has packed IDs (field 3)', () => {
    expect(decodeTranslateKeysRequest(encodeTranslateKeysRequest({ index: 'i', field: '', keys: ['a', 'b'] }))).toEqual(
      {
        index: 'i',
        field: '',
        keys: ['a', 'b'],
      },
    );
    const resp = encodeTranslateKeysResponse([1, 2, 300]);
    expect(hex(resp)).toBe('1a040102ac02');
    expect(decodeTranslateKeysResponse(resp)).toEqual([1, 2, 300]);
    expect(hex(encodeTranslateKeysResponse([]))).toBe('');
  });

  it('import response: empty error is zero bytes', () => {
    expect(encodeImportResponse('').length).toBe(0);
    const e = encodeImportResponse('roaring import is only supported for set and time fields');
    expect(e[0]).toBe(0x0a);
    expect(decodeImportResponse(e)).toBe('roaring import is only supported for set and time fields');
  });

  it('import-roaring request: clear flag and named views with data', () => {
    const data = Uint8Array.from([0x3c, 0x30, 0, 0, 0, 0, 0, 0]);
    const buf = encodeImportRoaringRequest({
      clear: true,
      views: [
        { name: '', data },
        { name: 'YMD', data: new Uint8Array(0) },
      ],
    });
    const d = decodeImportRoaringRequest(buf);
    expect(d.clear).toBe(true);
    expect(d.views.map((v) => v.name)).toEqual(['', 'YMD']);
    expect(Array.from(d.views[0].data)).toEqual(Array.from(data));
    expect(d.views[1].data.length).toBe(0);
    expect(decodeImportRoaringRequest(new Uint8Array(0))).toEqual({ clear: false, views: [] });
    expectBadRequest(() => decodeImportRoaringRequest(fromHex('12 05 0a')), /^unmarshaling import roaring request: /);
  });
});
