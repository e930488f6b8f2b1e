// Encoders for ImportRequest / ImportValueRequest (proto/public.proto), always packed: used by
// tests, benchmarks and clients; the server's hot path is the decoder in import-request.ts.
import { assert } from '../util/assert.js';
import { LITTLE_ENDIAN } from '../util/endian.js';

const VARINT = 0;
const LEN = 2;

export interface ImportRequestInput {
  index: string;
  field: string;
  shard?: number;
  rowIds?: ArrayLike<number>;
  columnIds?: ArrayLike<number | bigint>;
  timestamps?: ArrayLike<bigint> | null;
  rowKeys?: readonly string[];
  columnKeys?: readonly string[];
}

export interface ImportValueRequestInput {
  index: string;
  field: string;
  shard?: number;
  columnIds?: ArrayLike<number | bigint>;
  values?: ArrayLike<bigint>;
  columnKeys?: readonly string[];
}

const utf8 = new TextEncoder();

/** Builds a message from parts (each a complete field), so every size is known before copying. */
class Parts {
  private readonly parts: Uint8Array[] = [];
  private size = 0;

  push(part: Uint8Array): void {
    this.parts.push(part);
    this.size += part.length;
  }

  tagged(field: number, wireType: number, payload?: Uint8Array): void {
    const head = new Uint8Array(20);
    let p = writeVarint(head, 0, field * 8 + wireType);
    if (payload !== undefined) p = writeVarint(head, p, payload.length);
    this.push(head.subarray(0, p));
    if (payload !== undefined) this.push(payload);
  }

  string(field: number, s: string, always = false): void {
    if (s !== '' || always) this.tagged(field, LEN, utf8.encode(s));
  }

  uint(field: number, v: number): void {
    if (v === 0) return;
    this.tagged(field, VARINT);
    const b = new Uint8Array(10);
    this.push(b.subarray(0, writeVarint(b, 0, v)));
  }

  packed(field: number, payload: Uint8Array): void {
    if (payload.length > 0) this.tagged(field, LEN, payload);
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.size);
    let p = 0;
    for (const part of this.parts) {
      out.set(part, p);
      p += part.length;
    }
    return out;
  }
}

function varintSize(v: number): number {
  if (v < 0x80) return 1;
  if (v < 0x4000) return 2;
  if (v < 0x200000) return 3;
  if (v < 0x10000000) return 4;
  let n = 5;
  for (v = Math.floor(v / 0x800000000); v > 0; v = Math.floor(v / 128)) n++;
  return n;
}

/** Writes a non-negative safe integer as a varint; returns the new position. */
function writeVarint(buf: Uint8Array, p: number, v: number): number {
  while (v > 0x7fffffff) {
    buf[p++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  while (v > 0x7f) {
    buf[p++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[p++] = v;
  return p;
}

/** Packed payload (no tag, no length) of uint64 values given as safe non-negative integers. */
export function encodePackedUint64s(values: ArrayLike<number | bigint>): Uint8Array {
  let size = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v === 'bigint') return encodeBigUint64s(values);
    if (!(v >= 0 && v <= Number.MAX_SAFE_INTEGER && Number.isInteger(v))) {
      assert(false, `uint64 value out of range: ${v}`);
    }
    size += varintSize(v);
  }
  const out = new Uint8Array(size);
  let p = 0;
  for (let i = 0; i < values.length; i++) p = writeVarint(out, p, values[i] as number);
  return out;
}

/** The packed uint64s of a list holding bigints (column IDs above 2^53−1): the rare, slow path. */
function encodeBigUint64s(values: ArrayLike<number | bigint>): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < values.length; i++) {
    let v = BigInt(values[i]);
    assert(v >= 0n && v <= 0xffffffffffffffffn, `uint64 value out of range: ${v}`);
    while (v > 0x7fn) {
      out.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    out.push(Number(v));
  }
  return Uint8Array.from(out);
}

/** Packed payload of int64 values (two's complement, so negatives take 10 bytes). */
export function encodePackedInt64s(values: ArrayLike<bigint>): Uint8Array {
  const halves = int64Halves(values);
  const out = new Uint8Array((halves.length / 2) * 10);
  let p = 0;
  for (let i = 0; i < halves.length; i += 2) {
    let lo = halves[i];
    let hi = halves[i + 1];
    while (hi !== 0 || lo > 0x7f) {
      out[p++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    out[p++] = lo;
  }
  return out.slice(0, p);
}

/** (lo, hi) uint32 pairs of each int64, without a bigint per value on little-endian hosts. */
function int64Halves(values: ArrayLike<bigint>): Uint32Array {
  const all = values instanceof BigInt64Array ? values : BigInt64Array.from(Array.from(values));
  if (LITTLE_ENDIAN) return new Uint32Array(all.buffer, all.byteOffset, all.length * 2);
  const halves = new Uint32Array(all.length * 2);
  for (let i = 0; i < all.length; i++) {
    const v = BigInt.asUintN(64, all[i]);
    halves[2 * i] = Number(v & 0xffffffffn);
    halves[2 * i + 1] = Number(v >> 32n);
  }
  return halves;
}

export function encodeImportRequest(req: ImportRequestInput): Uint8Array {
  const m = new Parts();
  m.string(1, req.index);
  m.string(2, req.field);
  m.uint(3, req.shard ?? 0);
  m.packed(4, encodePackedUint64s(req.rowIds ?? []));
  m.packed(5, encodePackedUint64s(req.columnIds ?? []));
  m.packed(6, encodePackedInt64s(req.timestamps ?? []));
  for (const k of req.rowKeys ?? []) m.string(7, k, true);
  for (const k of req.columnKeys ?? []) m.string(8, k, true);
  return m.finish();
}

export function encodeImportValueRequest(req: ImportValueRequestInput): Uint8Array {
  const m = new Parts();
  m.string(1, req.index);
  m.string(2, req.field);
  m.uint(3, req.shard ?? 0);
  m.packed(5, encodePackedUint64s(req.columnIds ?? []));
  m.packed(6, encodePackedInt64s(req.values ?? []));
  for (const k of req.columnKeys ?? []) m.string(7, k, true);
  return m.finish();
}
