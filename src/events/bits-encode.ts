// A hand-written encoder for the Bits message (BitsSet / BitsCleared), the most frequent record:
// protobufjs's generic writer and a portable roaring serialization per row were most of the CPU
// a durable Set() spends outside HTTP. Wire format per proto/log/events.proto; for roaring rows
// the bytes equal protobufjs's (defaults omitted, rows as one packed double field).
import type { Bitmap, ColumnOffsets } from '../roaring/bitmap.js';
import { RoaringBitmap32 } from '../roaring/bitmap.js';

/** The bits of one (field, view, shard) a bit delta sets or clears: each row's column offsets. */
export interface BitDelta {
  index: string;
  field: string;
  view: string;
  shard: number;
  rows: number[];
  columns: ColumnOffsets[];
}

export interface BitsFields {
  index: string;
  field: string;
  view: string;
  shard: number;
  rows: readonly number[];
  columns: readonly ColumnOffsets[];
}

/**
 * Rows whose offsets are all this few go as plain varints (fields 8, 9): no native bitmap to
 * build, serialize or, on replay, deserialize. Beyond it roaring is smaller and faster to apply.
 */
export const SPARSE_MAX_PER_ROW = 16;

const TAG_INDEX = 0x0a,
  TAG_FIELD = 0x12,
  TAG_VIEW = 0x1a,
  TAG_SHARD = 0x20,
  TAG_ROWS = 0x2a;
const TAG_COLUMNS = 0x32,
  TAG_EXISTS = 0x38,
  TAG_COUNTS = 0x42,
  TAG_OFFSETS = 0x4a;

export function encodeBitsPayload(m: BitsFields, exists: boolean): Uint8Array {
  const sparse = m.columns.every((c) => (c instanceof Uint32Array ? c.length : c.size) <= SPARSE_MAX_PER_ROW);
  const offsets = sparse ? m.columns.map((c) => (c instanceof Uint32Array ? c : c.toUint32Array())) : undefined;
  const roaring = sparse ? undefined : m.columns.map((c) => asBitmap(c).serialize('portable'));

  const indexLen = Buffer.byteLength(m.index);
  const fieldLen = Buffer.byteLength(m.field);
  const viewLen = Buffer.byteLength(m.view);
  const { size, countsLen, offsetsLen } = sizeOf(m, exists, [indexLen, fieldLen, viewLen], offsets, roaring);
  const out = Buffer.allocUnsafe(size);
  let p = 0;
  const varint = (v: number): void => {
    while (v >= 0x80) {
      out[p++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    out[p++] = v;
  };
  const str = (tag: number, s: string, len: number): void => {
    if (len === 0) return;
    out[p++] = tag;
    varint(len);
    p += out.write(s, p, len, 'utf8');
  };
  str(TAG_INDEX, m.index, indexLen);
  str(TAG_FIELD, m.field, fieldLen);
  str(TAG_VIEW, m.view, viewLen);
  if (m.shard !== 0) {
    out[p++] = TAG_SHARD;
    varint(m.shard);
  }
  if (m.rows.length > 0) {
    out[p++] = TAG_ROWS;
    varint(8 * m.rows.length);
    for (const r of m.rows) p = out.writeDoubleLE(r, p);
  }
  if (roaring !== undefined) {
    for (const b of roaring) {
      out[p++] = TAG_COLUMNS;
      varint(b.length);
      out.set(b, p);
      p += b.length;
    }
  }
  if (exists) {
    out[p++] = TAG_EXISTS;
    out[p++] = 1;
  }
  if (offsets !== undefined) {
    if (countsLen > 0) {
      out[p++] = TAG_COUNTS;
      varint(countsLen);
      for (const o of offsets) varint(o.length);
    }
    if (offsetsLen > 0) {
      out[p++] = TAG_OFFSETS;
      varint(offsetsLen);
      for (const o of offsets) for (let i = 0; i < o.length; i++) varint(o[i]);
    }
  }
  return out;
}

/** The payload's byte size, and the lengths of its packed counts and offsets (sparse rows). */
function sizeOf(
  m: BitsFields,
  exists: boolean,
  nameLens: readonly number[],
  offsets: readonly Uint32Array[] | undefined,
  roaring: readonly Uint8Array[] | undefined,
): { size: number; countsLen: number; offsetsLen: number } {
  let size = 0;
  for (const len of nameLens) size += strSize(len);
  if (m.shard !== 0) size += 1 + varintSize(m.shard);
  if (m.rows.length > 0) size += 1 + varintSize(8 * m.rows.length) + 8 * m.rows.length;
  if (exists) size += 2;
  let countsLen = 0;
  let offsetsLen = 0;
  if (offsets !== undefined) {
    for (const o of offsets) {
      countsLen += varintSize(o.length);
      for (let i = 0; i < o.length; i++) offsetsLen += varintSize(o[i]);
    }
    if (countsLen > 0) size += 1 + varintSize(countsLen) + countsLen;
    if (offsetsLen > 0) size += 1 + varintSize(offsetsLen) + offsetsLen;
  } else for (const b of roaring ?? []) size += 1 + varintSize(b.length) + b.length;
  return { size, countsLen, offsetsLen };
}

function asBitmap(c: ColumnOffsets): Bitmap {
  return c instanceof Uint32Array ? new RoaringBitmap32(c) : c;
}

function strSize(len: number): number {
  return len === 0 ? 0 : 1 + varintSize(len) + len;
}

function varintSize(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 0x80);
    n++;
  }
  return n;
}
