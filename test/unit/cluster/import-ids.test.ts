// A bits import command's packed IDs (src/cluster/commands/import-ids.ts): unpacked on another
// node, they are the protobuf body's decode item by item — order, duplicates, row runs, columns
// going back and forth, IDs past 2^32, and the 32-bit or 64-bit arrays the
// protobuf decoder gives — in far fewer bytes; a request they cannot carry (keys, timestamps, IDs
// 2^52 and above) is not packed, and bytes that are not a packed body are refused.
import { describe, expect, it } from 'vitest';
import { packImportIds, unpackImportIds } from '../../../src/cluster/commands/import-ids.js';
import { decodeImportRequest, type ImportRequest } from '../../../src/encoding/import-request.js';
import { encodeImportRequest } from '../../../src/encoding/import-request-encode.js';
import { seededRandom } from '../../helpers/seeded.js';

const SHARD_WIDTH = 2 ** 20;
const where = { index: 'i', field: 'f', shard: 3 };

/** The bytes as another node gets them: a copy, so the packing node's own request is not taken. */
const elsewhere = (packed: Uint8Array): Uint8Array => Uint8Array.from(packed);

function roundTrip(req: ImportRequest): ImportRequest {
  const packed = packImportIds(req);
  if (packed === undefined) throw new Error('not packed');
  return unpackImportIds(elsewhere(packed), where);
}

const decoded = (rowIds: number[], columnIds: (number | bigint)[]): ImportRequest =>
  decodeImportRequest(encodeImportRequest({ index: 'i', field: 'f', shard: 3, rowIds, columnIds }));

describe('packed import IDs', () => {
  it('unpack to the protobuf decode, item by item and array type for array type', () => {
    const rnd = seededRandom(21);
    const cases: [number[], number[]][] = [
      [[], []],
      [[0], [0]],
      // Duplicates, a row coming back, columns going down, IDs at and past 2^31 and 2^32.
      [
        [1, 1, 2, 1, 1, 7, 7],
        [5, 5, 3, 2 ** 31, 2 ** 32 + 1, 2 ** 32 - 1, 0],
      ],
      // Row IDs past 2^32 (a Float64Array) up to 2^53−1, column IDs up to 2^52−1 and back to 0.
      [
        [2 ** 40, 3, 2 ** 53 - 1],
        [2 ** 52 - 1, 0, 2 ** 52 - 2],
      ],
    ];
    for (let k = 0; k < 20; k++) {
      const n = Math.floor(rnd() * 2000);
      const shard = Math.floor(rnd() * 5000);
      const rows = Array.from({ length: n }, () => Math.floor(rnd() * (k % 2 === 0 ? 4 : 2 ** 33)));
      if (k % 3 === 0) rows.sort((a, b) => a - b);
      cases.push([rows, Array.from({ length: n }, () => shard * SHARD_WIDTH + Math.floor(rnd() * SHARD_WIDTH))]);
    }
    for (const [rows, cols] of cases) {
      const want = decoded(rows, cols);
      const got = roundTrip(want);
      expect(got).toEqual({ ...want, ...where });
      expect(got.rowIds.constructor).toBe(want.rowIds.constructor);
      expect(got.columnIds.constructor).toBe(want.columnIds.constructor);
    }
  });

  it('take a fifth of the bytes of a per-shard body of two rows at 10%', () => {
    const rowIds: number[] = [];
    const columnIds: number[] = [];
    for (const row of [1, 2])
      for (let o = 0; o < SHARD_WIDTH; o += 10) {
        rowIds.push(row);
        columnIds.push(5 * SHARD_WIDTH + o);
      }
    const body = encodeImportRequest({ index: 'i', field: 'f', shard: 5, rowIds, columnIds });
    const packed = packImportIds(decodeImportRequest(body));
    expect(packed?.byteLength).toBeLessThan(body.byteLength / 4);
  });

  it('leave out what they cannot carry', () => {
    const base = decoded([1], [2]);
    expect(packImportIds({ ...base, timestamps: BigInt64Array.of(5n) })).toBeUndefined();
    expect(packImportIds({ ...base, rowKeys: ['a'] })).toBeUndefined();
    expect(packImportIds({ ...base, columnKeys: ['a'] })).toBeUndefined();
    expect(packImportIds(decoded([1], [2n ** 60n]))).toBeUndefined();
    expect(packImportIds(decoded([1, 1], [0, 2 ** 52]))).toBeUndefined();
    expect(packImportIds(decoded([1, 2], [3]))).toBeUndefined();
  });

  it('give the packing node its own request back once, and anyone else the bytes unpacked', () => {
    const req = decoded([1, 2], [3, 4]);
    const packed = packImportIds(req);
    if (packed === undefined) throw new Error('not packed');
    expect(unpackImportIds(packed, where)).toBe(req);
    const again = unpackImportIds(packed, where);
    expect(again).not.toBe(req);
    expect(again).toEqual({ ...req, ...where });
  });

  it('refuse bytes that are not a packed body', () => {
    const packed = elsewhere(packImportIds(decoded([1, 1, 2], [3, 4, 5])) ?? new Uint8Array());
    expect(() => unpackImportIds(packed.subarray(0, packed.length - 1), where)).toThrow(/ends inside|shorter/);
    expect(() => unpackImportIds(Uint8Array.of(...packed, 0), where)).toThrow(/bytes after/);
    expect(() => unpackImportIds(Uint8Array.of(2, 1, 0, 5), where)).toThrow(/longer than the count/);
    expect(() => unpackImportIds(Uint8Array.of(1, 1, 0, 1, 3), where)).toThrow(/below 0/);
    expect(() => unpackImportIds(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), where)).toThrow(
      /above 2\^54/,
    );
  });
});
