// The body of a bits import command in packed form: the row and column IDs of a client's protobuf
// ImportRequest, as the request decodes, in far fewer bytes. A per-shard body of 210 000 bits is
// ~1 MB of protobuf (a column ID of shard 2 on takes 4 bytes as a varint) and ~0.2 MB packed: the
// rows as runs (an import lists one row's bits after another) and each column as its difference
// from the one before (a sorted row's columns are close together), zigzag varints. Kafka then
// stores, sends and serves a fifth of the bytes, and the coordinator encodes and copies that much.
// Order and duplicates are kept: unpacked, the request is the protobuf's decode, item by item, so
// every holder validates and applies it exactly as one node applies the protobuf body (a mutex
// field's last bit per column wins by order). Only requests of IDs without timestamps (and columns
// below 2^52) are packed; the others go as the client sent them.
import type { ImportRequest } from '../../encoding/import-request.js';
import type { IdArray } from '../../domain/id-array.js';

const TWO_POW_31 = 0x80000000;
const TWO_POW_32 = 4294967296;
/** Columns are packed below this (real column IDs are far below it); a request with one above goes as it came. */
const COLUMN_LIMIT = 2 ** 52;

/**
 * The request each packed body was made from, for the node that packed it: its own apply takes it
 * (once) instead of unpacking the bytes it has just packed.
 */
const madeFrom = new WeakMap<Uint8Array, ImportRequest>();

/** The request's IDs packed; undefined when it has keys, timestamps or a column ID of 2^52 or more (sent as it came). */
export function packImportIds(req: ImportRequest): Uint8Array | undefined {
  const { rowIds, columnIds } = req;
  if (req.timestamps !== null || req.rowKeys.length > 0 || req.columnKeys.length > 0) return undefined;
  if (columnIds instanceof BigUint64Array || rowIds.length !== columnIds.length) return undefined;
  const n = rowIds.length;
  let runs = n === 0 ? 0 : 1;
  for (let i = 1; i < n; i++) if (rowIds[i] !== rowIds[i - 1]) runs++;
  // Varints of at most 8 bytes (values below 2^54): the count, the runs (row, length), the columns.
  const out = Buffer.allocUnsafe(8 * (2 + 2 * runs + n));
  let p = writeVarint(out, 0, n);
  p = writeVarint(out, p, runs);
  for (let i = 0; i < n; ) {
    const row = rowIds[i];
    let j = i + 1;
    while (j < n && rowIds[j] === row) j++;
    p = writeVarint(out, p, row);
    p = writeVarint(out, p, j - i);
    i = j;
  }
  p = writeColumns(out, p, columnIds);
  if (p < 0) return undefined;
  const packed = out.subarray(0, p);
  madeFrom.set(packed, req);
  return packed;
}

/** Writes the columns' zigzag differences at `at`; returns the end, or -1 for a column of 2^52 or more. */
function writeColumns(out: Buffer, at: number, columnIds: IdArray): number {
  let p = at;
  let prev = 0;
  for (let i = 0; i < columnIds.length; i++) {
    const c = columnIds[i];
    // Below 2^52, a difference's zigzag (twice its magnitude) stays an exact double.
    if (c >= COLUMN_LIMIT) return -1;
    const d = c - prev;
    prev = c;
    const z = d >= 0 ? 2 * d : -2 * d - 1;
    // Close columns (a row's, sorted) take one or two bytes: written here, the rest by writeVarint.
    if (z < 0x80) out[p++] = z;
    else if (z < 0x4000) {
      out[p++] = (z & 0x7f) | 0x80;
      out[p++] = z >>> 7;
    } else p = writeVarint(out, p, z);
  }
  return p;
}

/**
 * The request a packed body holds (index, field and shard are the command's): the one it was
 * packed from when this node packed it, else its bytes unpacked. Throws on bytes that are not a
 * packed body (a broken writer: the applier stops, as for any command it cannot read).
 */
export function unpackImportIds(body: Uint8Array, cmd: { index: string; field: string; shard: number }): ImportRequest {
  const mine = madeFrom.get(body);
  if (mine !== undefined) {
    madeFrom.delete(body);
    return mine;
  }
  const r = new Reader(body);
  const n = r.next();
  const runCount = r.next();
  const runs: number[] = [];
  let total = 0;
  let wideRows = false;
  for (let k = 0; k < runCount; k++) {
    const row = r.next();
    const len = r.next();
    if (len > n - total) throw new Error('packed import IDs: the row runs are longer than the count');
    if (row >= TWO_POW_32) wideRows = true;
    runs.push(row, len);
    total += len;
  }
  if (total !== n) throw new Error('packed import IDs: the row runs are shorter than the count');
  // As the protobuf decoder gives them: 32-bit arrays unless an ID needs more.
  const rowIds = wideRows ? new Float64Array(n) : new Uint32Array(n);
  for (let k = 0, at = 0; k < runs.length; k += 2) {
    rowIds.fill(runs[k], at, at + runs[k + 1]);
    at += runs[k + 1];
  }
  const columnIds = readColumns(r, n);
  if (r.pos !== body.length) throw new Error('packed import IDs: bytes after the columns');
  return {
    index: cmd.index,
    field: cmd.field,
    shard: cmd.shard,
    rowIds,
    columnIds,
    timestamps: null,
    rowKeys: [],
    columnKeys: [],
  };
}

/** n columns from their zigzag differences: a Uint32Array, a Float64Array from the first above 2^32−1. */
function readColumns(r: Reader, n: number): IdArray {
  const buf = r.buf;
  // The fast loop reads one- and two-byte varints with no bounds checks, up to 8 bytes before the end.
  const stop = buf.length - 8;
  let narrow: Uint32Array | undefined = new Uint32Array(n);
  let wide: Float64Array | undefined;
  let prev = 0;
  let p = r.pos;
  for (let i = 0; i < n; i++) {
    let z: number;
    const b = p < stop ? buf[p] : 0x80;
    if (b < 0x80) {
      z = b;
      p++;
    } else if (p < stop && buf[p + 1] < 0x80) {
      z = (b & 0x7f) | (buf[p + 1] << 7);
      p += 2;
    } else {
      r.pos = p;
      z = r.next();
      p = r.pos;
    }
    prev += z % 2 === 0 ? z / 2 : -(z + 1) / 2;
    if (prev < 0) throw new Error('packed import IDs: a column below 0');
    if (narrow !== undefined) {
      if (prev < TWO_POW_32) {
        narrow[i] = prev;
        continue;
      }
      wide = Float64Array.from(narrow.subarray(0, i));
      wide = grow(wide, n);
      narrow = undefined;
    }
    if (wide !== undefined) wide[i] = prev;
  }
  r.pos = p;
  return narrow ?? wide ?? new Uint32Array(0);
}

function grow(a: Float64Array, n: number): Float64Array {
  const out = new Float64Array(n);
  out.set(a);
  return out;
}

/** Writes v (an integer, 0 ≤ v < 2^54) as a varint at p; returns the end. */
function writeVarint(out: Buffer, at: number, v: number): number {
  let p = at;
  let x = v;
  while (x >= TWO_POW_31) {
    out[p++] = (x % 128) | 0x80;
    x = Math.floor(x / 128);
  }
  while (x >= 0x80) {
    out[p++] = (x & 0x7f) | 0x80;
    x >>>= 7;
  }
  out[p++] = x;
  return p;
}

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}

  /** The next varint (below 2^54). */
  next(): number {
    let p = this.pos;
    let b = this.byte(p++);
    let v = b & 0x7f;
    if (b >= 0x80) {
      b = this.byte(p++);
      v |= (b & 0x7f) << 7;
      if (b >= 0x80) {
        b = this.byte(p++);
        v |= (b & 0x7f) << 14;
        if (b >= 0x80) {
          b = this.byte(p++);
          v |= (b & 0x7f) << 21;
          // Past 28 bits: by multiplication (bit operations stop at 32).
          for (let scale = 1 << 28; b >= 0x80; scale *= 128) {
            if (scale > 2 ** 49) throw new Error('packed import IDs: a varint above 2^54');
            b = this.byte(p++);
            v += (b & 0x7f) * scale;
          }
        }
      }
    }
    this.pos = p;
    return v;
  }

  private byte(p: number): number {
    if (p >= this.buf.length) throw new Error('packed import IDs: the body ends inside a varint');
    return this.buf[p];
  }
}
