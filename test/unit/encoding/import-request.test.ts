import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/domain/errors.js';
import type { WideIdArray } from '../../../src/domain/id-array.js';
import { INT64_MAX, INT64_MIN } from '../../../src/domain/types.js';
import { decodeImportRequest, decodeImportValueRequest } from '../../../src/encoding/import-request.js';
import {
  encodeImportRequest,
  encodeImportValueRequest,
  encodePackedUint64s,
} from '../../../src/encoding/import-request-encode.js';
import { expectBadRequest } from '../../helpers/errors.js';

// An independent reference codec: protobufjs over the same .proto.
const root = new protobuf.Root().loadSync(fileURLToPath(new URL('../../../proto/public.proto', import.meta.url)), {
  keepCase: true,
});
const PbImportRequest = root.lookupType('internal.ImportRequest');
const PbImportValueRequest = root.lookupType('internal.ImportValueRequest');

// ---- Hand-built wire bytes, to control packing, chunking and unknown fields. ----
function varint(v: bigint): number[] {
  let u = BigInt.asUintN(64, v);
  const out: number[] = [];
  while (u > 0x7fn) {
    out.push(Number(u & 0x7fn) | 0x80);
    u >>= 7n;
  }
  out.push(Number(u));
  return out;
}
const key = (field: number, wireType: number): number[] => varint(BigInt(field * 8 + wireType));
const len = (field: number, payload: number[]): number[] => [
  ...key(field, 2),
  ...varint(BigInt(payload.length)),
  ...payload,
];
const str = (field: number, s: string): number[] => len(field, [...Buffer.from(s, 'utf8')]);
const packed = (field: number, vs: bigint[]): number[] => len(field, vs.flatMap(varint));
const unpacked = (field: number, vs: bigint[]): number[] => vs.flatMap((v) => [...key(field, 0), ...varint(v)]);
const bytes = (...parts: number[][]): Uint8Array => Uint8Array.from(parts.flat());

const ids = (xs: WideIdArray): number[] => Array.from(xs as ArrayLike<number | bigint>, Number);

describe('decodeImportRequest', () => {
  it('decodes what protobufjs encodes (packed, proto3 default)', () => {
    const msg = {
      Index: 'i',
      Field: 'f',
      Shard: 3,
      RowIDs: [1, 2, 2 ** 40, Number.MAX_SAFE_INTEGER],
      ColumnIDs: [3 * 2 ** 20, 3 * 2 ** 20 + 1, 0, 127],
      Timestamps: ['1500000000000000000', '-1', '0', '9223372036854775807'],
      RowKeys: ['a', 'é', ''],
      ColumnKeys: ['x'],
    };
    const d = decodeImportRequest(PbImportRequest.encode(msg).finish());
    expect(d.index).toBe('i');
    expect(d.field).toBe('f');
    expect(d.shard).toBe(3);
    expect(ids(d.rowIds)).toEqual(msg.RowIDs);
    expect(ids(d.columnIds)).toEqual(msg.ColumnIDs);
    expect(Array.from(d.timestamps ?? [])).toEqual([1500000000000000000n, -1n, 0n, INT64_MAX]);
    expect(d.rowKeys).toEqual(['a', 'é', '']);
    expect(d.columnKeys).toEqual(['x']);
  });

  it('decodes from an unaligned view into a larger buffer (pooled Node Buffers)', () => {
    const ids = Array.from({ length: 100 }, (_, i) => i * 1000);
    const inner = encodeImportRequest({
      index: 'é',
      field: 'f',
      rowIds: ids,
      columnIds: ids,
      timestamps: ids.map(BigInt),
    });
    const outer = new Uint8Array(inner.length + 7);
    outer.set(inner, 3);
    const d = decodeImportRequest(outer.subarray(3, 3 + inner.length));
    expect(d.index).toBe('é');
    expect(Array.from(d.columnIds as ArrayLike<number>)).toEqual(ids);
    expect(Array.from(d.timestamps ?? [])).toEqual(ids.map(BigInt));
  });

  it('reports no timestamps as null and an empty message as empty', () => {
    const d = decodeImportRequest(new Uint8Array(0));
    expect(d).toMatchObject({ index: '', field: '', shard: 0, timestamps: null, rowKeys: [], columnKeys: [] });
    expect(d.rowIds.length).toBe(0);
    expect(d.columnIds.length).toBe(0);
  });

  it('accepts unpacked values and several chunks of one field, in order', () => {
    const buf = bytes(
      packed(4, [1n, 2n]),
      unpacked(5, [10n]),
      unpacked(4, [3n]),
      packed(5, [11n, 12n]),
      packed(4, [4n, 2n ** 35n]),
      unpacked(5, [13n]),
      unpacked(6, [-5n]),
      packed(6, [7n]),
    );
    const d = decodeImportRequest(buf);
    expect(ids(d.rowIds)).toEqual([1, 2, 3, 4, 2 ** 35]);
    expect(ids(d.columnIds)).toEqual([10, 11, 12, 13]);
    expect(Array.from(d.timestamps ?? [])).toEqual([-5n, 7n]);
  });

  it('decodes many unpacked values (growth path)', () => {
    const n = 5000;
    const vs = Array.from({ length: n }, (_, i) => BigInt(i * 1000));
    const d = decodeImportRequest(bytes(unpacked(5, vs), unpacked(4, vs)));
    expect(ids(d.columnIds)).toEqual(vs.map(Number));
    expect(ids(d.rowIds)).toEqual(vs.map(Number));
  });

  it('skips unknown fields of every wire type, including groups', () => {
    const buf = bytes(
      unpacked(9, [123456789n]),
      [...key(10, 1), 1, 2, 3, 4, 5, 6, 7, 8],
      str(11, 'ignored'),
      [...key(12, 5), 1, 2, 3, 4],
      [...key(13, 3), ...unpacked(1, [5n]), ...str(2, 'x'), ...key(14, 3), ...key(14, 4), ...key(13, 4)],
      str(1, 'idx'),
      packed(5, [42n]),
      [...key(2000, 0), 1],
    );
    const d = decodeImportRequest(buf);
    expect(d.index).toBe('idx');
    expect(ids(d.columnIds)).toEqual([42]);
  });

  it('rejects row IDs above 2^53-1 with the exact value, on fast and careful paths', () => {
    const big = 2n ** 53n;
    // Long packed chunk: the bad value sits in the fast (≥ 10 bytes left) region.
    expectBadRequest(
      () => decodeImportRequest(bytes(packed(4, [1n, big, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n]))),
      /row ID 9007199254740992 is above 2\^53-1/,
    );
    // Alone: the tail path.
    expectBadRequest(() => decodeImportRequest(bytes(packed(4, [big]))), /row ID 9007199254740992/);
    expectBadRequest(() => decodeImportRequest(bytes(unpacked(4, [2n ** 64n - 1n]))), /row ID 18446744073709551615/);
    expectBadRequest(() => decodeImportRequest(bytes(unpacked(3, [2n ** 60n]))), /shard 1152921504606846976/);
    expect(ids(decodeImportRequest(bytes(packed(5, [2n ** 53n - 1n]))).columnIds)).toEqual([Number.MAX_SAFE_INTEGER]);
  });

  it('keeps IDs in a Uint32Array while they fit, and widens to Float64Array from the first that does not', () => {
    const small = Array.from({ length: 40 }, (_, i) => BigInt(i * 9_973));
    // 2^32 − 1 and 2^31 + 5 take five bytes and still fit; so does a non-canonical 0 (six bytes).
    const fits = [...small, 2n ** 32n - 1n, 2n ** 31n + 5n, ...small];
    const narrow = decodeImportRequest(bytes(packed(5, fits), [...key(4, 2), 6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]));
    expect(narrow.columnIds).toBeInstanceOf(Uint32Array);
    expect(ids(narrow.columnIds)).toEqual(fits.map(Number));
    expect(ids(narrow.rowIds)).toEqual([0]);
    // 2^32 and 2^53 − 1 in the middle of a long packed chunk (fast-path region) and at its end.
    for (const wide of [2n ** 32n, 2n ** 53n - 1n]) {
      const vs = [...small, wide, ...small, wide];
      const d = decodeImportRequest(
        bytes(packed(4, vs.slice(0, 30)), packed(4, vs.slice(30)), unpacked(5, [wide]), unpacked(5, [1n])),
      );
      expect(d.rowIds).toBeInstanceOf(Float64Array);
      expect(ids(d.rowIds)).toEqual(vs.map(Number));
      expect(ids(d.columnIds)).toEqual([Number(wide), 1]);
    }
    // Beyond 2^53 − 1 after the column was widened: still the error naming the value.
    expectBadRequest(
      () => decodeImportRequest(bytes(packed(4, [...small, 2n ** 40n, ...small, 2n ** 53n, ...small]))),
      /row ID 9007199254740992 is above 2\^53-1/,
    );
  });

  it('takes column IDs in the whole uint64 range, exact, in a BigUint64Array only when needed', () => {
    const small = Array.from({ length: 40 }, (_, i) => BigInt(i * 9_973));
    for (const huge of [2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n, 2n ** 64n - 1n]) {
      // In a long packed chunk after a widened (Float64Array) value, and unpacked at the end.
      const vs = [...small, 2n ** 40n, ...small, huge, ...small];
      const d = decodeImportRequest(bytes(packed(5, vs), unpacked(5, [huge])));
      expect(d.columnIds).toBeInstanceOf(BigUint64Array);
      expect(Array.from(d.columnIds, BigInt)).toEqual([...vs, huge]);
      const v = decodeImportValueRequest(bytes(unpacked(5, [huge]), packed(5, [1n])));
      expect(Array.from(v.columnIds, BigInt)).toEqual([huge, 1n]);
    }
    expect(decodeImportRequest(bytes(packed(5, small))).columnIds).toBeInstanceOf(Uint32Array);
  });

  it('decodes long packed fields across the fast loop chunk boundary', () => {
    const vs = Array.from({ length: 60_000 }, (_, i) => BigInt((i * 7919) % 3_000_000_000));
    const d = decodeImportRequest(bytes(packed(5, vs)));
    expect(d.columnIds).toBeInstanceOf(Uint32Array);
    expect(ids(d.columnIds)).toEqual(vs.map(Number));
  });

  it('rejects malformed input with unmarshaling errors', () => {
    const bad = (buf: Uint8Array): void =>
      expectBadRequest(() => decodeImportRequest(buf), /^unmarshaling import request: /);
    bad(bytes([0x2a, 0x05, 0x01])); // packed length beyond the end
    bad(bytes([0x28])); // tag without value
    bad(bytes([0x28, 0x80])); // truncated varint
    bad(bytes([0x2a, 0x01, 0x80])); // varint crossing the end of its packed region
    bad(bytes([0x28, ...Array<number>(10).fill(0xff), 0x01])); // 11-byte varint
    bad(bytes([0x28, ...Array<number>(9).fill(0xff), 0x02])); // tenth byte beyond bit 63
    bad(bytes([0x00, 0x01])); // field 0
    bad(bytes(unpacked(1, [1n]))); // Index as a varint
    bad(bytes(str(3, 'x'))); // Shard as bytes
    bad(bytes([...key(5, 1), 1, 2, 3, 4, 5, 6, 7, 8])); // ColumnIDs as fixed64
    bad(bytes([...key(9, 6)])); // illegal wire type
    bad(bytes([...key(9, 4)])); // stray end group
    bad(bytes([...key(9, 3), ...key(8, 4)])); // mismatched end group
    bad(bytes([...key(9, 3)])); // unterminated group
    bad(bytes([...key(9, 1), 1, 2])); // short fixed64
    bad(bytes([...key(9, 5), 1])); // short fixed32
  });

  it('never throws anything but a bad_request DomainError on truncation', () => {
    const buf = encodeImportRequest({
      index: 'i',
      field: 'f',
      shard: 1,
      rowIds: [1, 2, 300],
      columnIds: [2 ** 40, 5, 6],
      timestamps: [-1n, 2n, 3n],
      rowKeys: ['k'],
    });
    for (let cut = 0; cut < buf.length; cut++) {
      try {
        decodeImportRequest(buf.subarray(0, cut));
      } catch (e) {
        expect(e).toBeInstanceOf(DomainError);
      }
    }
  });

  it('round-trips arbitrary requests in arbitrary chunkings (property)', () => {
    const id = fc.oneof(
      fc.nat(300),
      fc.nat(2 ** 21),
      fc.constantFrom(0, 2 ** 28 - 1, 2 ** 28, 2 ** 53 - 1),
      fc.maxSafeNat(),
    );
    const ts = fc.oneof(
      fc.bigInt({ min: -300n, max: 300n }),
      fc.constantFrom(INT64_MIN, INT64_MAX, 0n, -1n),
      fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
    );
    const chunking = fc.array(fc.tuple(fc.nat(8), fc.boolean()), { maxLength: 6 });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(id, id, ts), { maxLength: 60 }),
        chunking,
        chunking,
        chunking,
        fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 4 }),
        (triples, ch4, ch5, ch6, keys) => {
          const parts: number[][] = [str(1, 'idx'), str(2, 'fld')];
          // Split each column into chunks, each packed or unpacked, interleaving fields.
          const split = (field: number, vs: bigint[], chunks: [number, boolean][]): number[][] => {
            const out: number[][] = [];
            let at = 0;
            for (const [size, isPacked] of chunks) {
              const part = vs.slice(at, at + size);
              at += part.length;
              if (part.length > 0) out.push(isPacked ? packed(field, part) : unpacked(field, part));
            }
            if (at < vs.length) out.push(packed(field, vs.slice(at)));
            return out;
          };
          const rows = split(
            4,
            triples.map((t) => BigInt(t[0])),
            ch4,
          );
          const cols = split(
            5,
            triples.map((t) => BigInt(t[1])),
            ch5,
          );
          const tss = split(
            6,
            triples.map((t) => t[2]),
            ch6,
          );
          for (let i = 0; i < Math.max(rows.length, cols.length, tss.length); i++) {
            for (const p of [rows[i], cols[i], tss[i]]) if (p !== undefined) parts.push(p);
          }
          for (const k of keys) parts.push(str(8, k));
          const d = decodeImportRequest(bytes(...parts));
          expect(ids(d.rowIds)).toEqual(triples.map((t) => t[0]));
          expect(ids(d.columnIds)).toEqual(triples.map((t) => t[1]));
          expect(Array.from(d.timestamps ?? [])).toEqual(triples.map((t) => t[2]));
          expect(d.columnKeys).toEqual(keys);
          expect([d.index, d.field]).toEqual(['idx', 'fld']);
        },
      ),
    );
  });
});

describe('encodeImportRequest', () => {
  it('writes packed fields that protobufjs reads back', () => {
    const buf = encodeImportRequest({
      index: 'i',
      field: 'f',
      shard: 2 ** 33,
      rowIds: [0, 1, 2 ** 52],
      columnIds: new Float64Array([5, 6, 7]),
      timestamps: new BigInt64Array([INT64_MIN, -1n, 1n]),
      rowKeys: ['a', ''],
      columnKeys: ['b'],
    });
    const m = PbImportRequest.toObject(PbImportRequest.decode(buf), { longs: String });
    expect(m).toEqual({
      Index: 'i',
      Field: 'f',
      Shard: String(2 ** 33),
      RowIDs: ['0', '1', String(2 ** 52)],
      ColumnIDs: ['5', '6', '7'],
      Timestamps: [INT64_MIN.toString(), '-1', '1'],
      RowKeys: ['a', ''],
      ColumnKeys: ['b'],
    });
  });

  it('emits exactly the packed bytes (field order, no defaults)', () => {
    expect(
      Buffer.from(encodeImportRequest({ index: 'i', field: '', rowIds: [1, 300], columnIds: [] })).toString('hex'),
    ).toBe('0a0169' + '2203' + '01ac02');
    expect(Array.from(encodePackedUint64s([0, 127, 128, 2 ** 53 - 1]))).toEqual([
      0,
      127,
      0x80,
      0x01,
      ...varint(2n ** 53n - 1n),
    ]);
  });

  it('refuses IDs that are not uint64-safe integers', () => {
    expect(() => encodePackedUint64s([-1])).toThrow(/out of range/);
    expect(() => encodePackedUint64s([1.5])).toThrow(/out of range/);
    expect(() => encodePackedUint64s([2 ** 53])).toThrow(/out of range/);
  });
});

describe('ImportValueRequest', () => {
  it('round-trips through both codecs, including extreme int64 values', () => {
    const values = [0n, -1n, 1n, INT64_MIN, INT64_MAX, -(2n ** 31n), 2n ** 32n, 123456789012345n];
    const columnIds = values.map((_, i) => i * 2 ** 20 + i);
    const buf = encodeImportValueRequest({ index: 'i', field: 'v', shard: 7, columnIds, values, columnKeys: ['c'] });
    const d = decodeImportValueRequest(buf);
    expect(d).toMatchObject({ index: 'i', field: 'v', shard: 7, columnKeys: ['c'] });
    expect(ids(d.columnIds)).toEqual(columnIds);
    expect(Array.from(d.values)).toEqual(values);
    const viaPb = decodeImportValueRequest(
      PbImportValueRequest.encode({ ColumnIDs: columnIds, Values: values.map(String) }).finish(),
    );
    expect(Array.from(viaPb.values)).toEqual(values);
    const m = PbImportValueRequest.toObject(PbImportValueRequest.decode(buf), { longs: String });
    expect(m.Values).toEqual(values.map(String));
  });

  it('accepts unpacked values, ignores the ImportRequest-only field 4', () => {
    const d = decodeImportValueRequest(bytes(unpacked(6, [-2n, 3n]), packed(4, [9n]), unpacked(5, [1n, 2n])));
    expect(Array.from(d.values)).toEqual([-2n, 3n]);
    expect(ids(d.columnIds)).toEqual([1, 2]);
    expect(decodeImportValueRequest(new Uint8Array(0)).values.length).toBe(0);
  });

  it('round-trips arbitrary values (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.maxSafeNat(), fc.bigInt({ min: INT64_MIN, max: INT64_MAX })), { maxLength: 80 }),
        (pairs) => {
          const d = decodeImportValueRequest(
            encodeImportValueRequest({
              index: 'x',
              field: 'y',
              columnIds: pairs.map((p) => p[0]),
              values: pairs.map((p) => p[1]),
            }),
          );
          expect(ids(d.columnIds)).toEqual(pairs.map((p) => p[0]));
          expect(Array.from(d.values)).toEqual(pairs.map((p) => p[1]));
        },
      ),
    );
  });

  it('rejects malformed values', () => {
    expectBadRequest(() => decodeImportValueRequest(bytes([0x32, 0x03, 0xff, 0xff])), /^unmarshaling import request: /);
    expectBadRequest(() => decodeImportValueRequest(bytes(str(6, 'x').slice(0, 2))), /^unmarshaling import request: /);
  });
});
