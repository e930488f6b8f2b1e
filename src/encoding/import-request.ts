// Hand-written protobuf codec for ImportRequest / ImportValueRequest (proto/public.proto), the
// import hot path: varints go straight into typed arrays, no per-item objects, no protobufjs Long.
// Repeated scalars are accepted packed or unpacked and in any number of chunks, as proto3 requires.
import { badRequest, type DomainError } from '../domain/errors.js';
import { LITTLE_ENDIAN } from '../util/endian.js';
import type { IdArray, WideIdArray } from '../domain/id-array.js';
import { systemClock } from '../util/clock.js';

export interface ImportRequest {
  index: string;
  field: string;
  shard: number;
  rowIds: IdArray;
  /** Any uint64: a BigUint64Array only when one is above 2^53−1. */
  columnIds: WideIdArray;
  /** Unix nanoseconds per bit, 0 = none; null when the request carried no timestamps. */
  timestamps: BigInt64Array | null;
  rowKeys: string[];
  columnKeys: string[];
}

export interface ImportValueRequest {
  index: string;
  field: string;
  shard: number;
  columnIds: WideIdArray;
  values: BigInt64Array;
  columnKeys: string[];
}

const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const START_GROUP = 3;
const END_GROUP = 4;
const FIXED32 = 5;

/** hi word of a uint64 must stay below 2^21 for hi·2^32 + lo to be ≤ 2^53−1. */
const SAFE_HI_LIMIT = 0x200000;
const TWO_POW_32 = 4294967296;

const malformed = (what: string): DomainError => badRequest(`unmarshaling import request: ${what}`);

/**
 * Cursor over one message. The last varint read leaves its halves in `lo`/`hi` so the hot loops
 * allocate nothing.
 */
class Wire {
  pos = 0;
  lo = 0;
  hi = 0;
  constructor(
    readonly buf: Uint8Array,
    readonly end: number,
  ) {}

  /** Reads a varint of up to 64 bits into lo/hi; it must end before `limit`. */
  varint(limit: number): void {
    const buf = this.buf;
    let p = this.pos;
    let lo = 0;
    let hi = 0;
    let b = 0;
    for (let shift = 0; shift < 28; shift += 7) {
      if (p >= limit) throw malformed('unexpected end of data in varint');
      b = buf[p++];
      lo |= (b & 0x7f) << shift;
      if (b < 0x80) {
        this.pos = p;
        this.lo = lo >>> 0;
        this.hi = 0;
        return;
      }
    }
    if (p >= limit) throw malformed('unexpected end of data in varint');
    b = buf[p++];
    lo |= (b & 0x7f) << 28;
    hi = (b & 0x7f) >> 4;
    for (let shift = 3; b >= 0x80; shift += 7) {
      if (shift > 31) throw malformed('varint overflows 64 bits');
      if (p >= limit) throw malformed('unexpected end of data in varint');
      b = buf[p++];
      // The tenth byte holds only bit 63.
      if (shift === 31 && (b & 0x7e) !== 0) throw malformed('varint overflows 64 bits');
      hi |= (b & 0x7f) << shift;
    }
    this.pos = p;
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
  }

  /** A uint64 as a safe integer; `what` names it in the error for IDs beyond 2^53−1. */
  uint(limit: number, what: string): number {
    const start = this.pos;
    this.varint(limit);
    if (this.hi >= SAFE_HI_LIMIT) {
      const value = (BigInt(this.hi) << 32n) | BigInt(this.lo);
      this.pos = start;
      throw badRequest(
        `unmarshaling import request: ${what} ${value} is above 2^53-1, which this server does not support`,
      );
    }
    return this.hi * TWO_POW_32 + this.lo;
  }

  /** The end of a length-delimited payload starting at pos. */
  lengthEnd(): number {
    this.varint(this.end);
    const len = this.hi * TWO_POW_32 + this.lo;
    if (len > this.end - this.pos) throw malformed('unexpected end of data in length-delimited field');
    return this.pos + len;
  }

  string(text: Buffer): string {
    const end = this.lengthEnd();
    const s = end === this.pos ? '' : text.toString('utf8', this.pos, end);
    this.pos = end;
    return s;
  }

  skip(wireType: number, field: number): void {
    switch (wireType) {
      case VARINT:
        this.varint(this.end);
        return;
      case FIXED64:
        this.advance(8);
        return;
      case LEN:
        this.pos = this.lengthEnd();
        return;
      case FIXED32:
        this.advance(4);
        return;
      case START_GROUP:
        for (;;) {
          if (this.pos >= this.end) throw malformed('unexpected end of data in group');
          this.varint(this.end);
          const wt = this.lo & 7;
          const f = this.lo >>> 3;
          if (wt === END_GROUP) {
            if (f !== field) throw malformed('mismatched end group');
            return;
          }
          this.skip(wt, f);
        }
      default:
        throw malformed(`illegal wireType ${wireType} for field ${field}`);
    }
  }

  private advance(n: number): void {
    if (this.end - this.pos < n) throw malformed('unexpected end of data');
    this.pos += n;
  }
}

/**
 * Growable column of uint64 IDs (exact size when the field comes as one packed chunk): a
 * Uint32Array until the first ID ≥ 2^32, a Float64Array from then on (see IdArray).
 */
class IdColumn {
  arr: WideIdArray = new Uint32Array(0);
  n = 0;
  /** `wide`: IDs above 2^53−1 are taken (column IDs: any uint64), in a BigUint64Array. */
  constructor(
    readonly what: string,
    readonly wide = false,
  ) {}

  private reserve(extra: number): void {
    const need = this.n + extra;
    if (need <= this.arr.length) return;
    const size = this.arr.length === 0 ? need : Math.max(need, this.arr.length * 2);
    const a = this.arr;
    if (a instanceof BigUint64Array) {
      const next = new BigUint64Array(size);
      next.set(a.subarray(0, this.n));
      this.arr = next;
    } else {
      const next = a instanceof Uint32Array ? new Uint32Array(size) : new Float64Array(size);
      next.set(a.subarray(0, this.n));
      this.arr = next;
    }
  }

  /** The careful reader: one varint, rejected above 2^53−1 unless the column is wide. */
  private pushNext(w: Wire, end: number): void {
    if (!this.wide) {
      this.push(w.uint(end, this.what));
      return;
    }
    w.varint(end);
    const a = this.arr;
    if (w.hi < SAFE_HI_LIMIT && !(a instanceof BigUint64Array)) {
      this.push(w.hi * TWO_POW_32 + w.lo);
      return;
    }
    let big: BigUint64Array;
    if (a instanceof BigUint64Array) big = a;
    else {
      // The first ID above 2^53−1: the whole column becomes bigints (rare, never the common path).
      big = new BigUint64Array(a.length);
      for (let i = 0; i < this.n; i++) big[i] = BigInt(a[i]);
      this.arr = big;
    }
    big[this.n++] = (BigInt(w.hi) << 32n) | BigInt(w.lo);
  }

  /** Appends one ID decoded by the careful reader, widening the column when it needs 33+ bits. */
  private push(v: number): void {
    if (v > 0xffffffff && this.arr instanceof Uint32Array) this.arr = Float64Array.from(this.arr);
    const a = this.arr as IdArray; // pushNext keeps numbers out of a BigUint64Array
    a[this.n++] = v;
  }

  /** A packed field comes back as work that yields every YIELD_BYTES (see Decoding). */
  read(w: Wire, wireType: number): Decoding | undefined {
    if (wireType === VARINT) {
      this.reserve(this.n === this.arr.length ? Math.max(1024, this.n) : 1);
      this.pushNext(w, w.end);
      return undefined;
    }
    if (wireType !== LEN) throw malformed(`wrong wireType ${wireType} for ${this.what}s`);
    return this.readPacked(w, w.lengthEnd());
  }

  private *readPacked(w: Wire, end: number): Decoding {
    this.reserve(countVarints(w.buf, w.pos, end));
    // The fast loops stop before a varint they do not take (and ≤ 10 bytes before the end, so
    // they need no bounds checks); the careful reader takes that one, which also rejects IDs
    // above 2^53−1 with the error naming them.
    let next = w.pos + YIELD_BYTES;
    while (w.pos < end) {
      const arr = this.arr;
      if (arr instanceof Uint32Array) this.n = readNarrow(w, end, arr, this.n);
      else if (arr instanceof Float64Array) this.n = readWide(w, end, arr, this.n);
      if (w.pos < end) this.pushNext(w, end);
      if (w.pos >= next) {
        next = w.pos + YIELD_BYTES;
        yield;
      }
    }
  }

  result(): WideIdArray {
    return this.n === this.arr.length ? this.arr : this.arr.slice(0, this.n);
  }

  /** The IDs of a column that is not wide (row IDs), typed as such. */
  narrow(): IdArray {
    const r = this.result();
    if (r instanceof BigUint64Array) throw new Error(`${this.what}s are not wide`);
    return r;
  }
}

/**
 * Bytes a fast loop decodes per call. Bounded so that big bodies make many short calls: V8 then
 * optimizes the loops as whole functions with the feedback of every branch, instead of entering
 * them on-stack (OSR) from the first call, where a branch not yet seen (the first 3-byte varint
 * after a million 1-byte row IDs) deoptimizes the rest of the call back into the interpreter.
 */
const FAST_CHUNK_BYTES = 1 << 16;

/** Unrolled decode of varints below 2^32 into a Uint32Array; returns the new count. */
function readNarrow(w: Wire, end: number, arr: Uint32Array, n: number): number {
  const buf = w.buf;
  const stop = Math.min(end - 10, w.pos + FAST_CHUNK_BYTES);
  let p = w.pos;
  while (p < stop) {
    let b = buf[p++];
    let v = b & 0x7f;
    if (b >= 0x80) {
      b = buf[p++];
      v |= (b & 0x7f) << 7;
      if (b >= 0x80) {
        b = buf[p++];
        v |= (b & 0x7f) << 14;
        if (b >= 0x80) {
          b = buf[p++];
          v |= (b & 0x7f) << 21;
          if (b >= 0x80) {
            b = buf[p++];
            // A fifth byte above 0x0f means 2^32 or more (or a longer varint).
            if (b > 0x0f) {
              p -= 5;
              break;
            }
            v |= b << 28; // may turn v negative; the Uint32Array store wraps it back
          }
        }
      }
    }
    arr[n++] = v;
  }
  w.pos = p;
  return n;
}

/** Unrolled decode of varints below 2^28 into a Float64Array (the column already widened). */
function readWide(w: Wire, end: number, arr: Float64Array, n: number): number {
  const buf = w.buf;
  const stop = Math.min(end - 10, w.pos + FAST_CHUNK_BYTES);
  let p = w.pos;
  while (p < stop) {
    let b = buf[p++];
    let v = b & 0x7f;
    if (b >= 0x80) {
      b = buf[p++];
      v |= (b & 0x7f) << 7;
      if (b >= 0x80) {
        b = buf[p++];
        v |= (b & 0x7f) << 14;
        if (b >= 0x80) {
          b = buf[p++];
          v |= (b & 0x7f) << 21;
          if (b >= 0x80) {
            p -= 4;
            break;
          }
        }
      }
    }
    arr[n++] = v;
  }
  w.pos = p;
  return n;
}

/**
 * Growable BigInt64Array of int64 values, filled through a 32-bit view (no bigint per value):
 * right only on little-endian hosts; elsewhere (none in practice) each bigint is built instead.
 */
class Int64Column {
  arr = new BigInt64Array(0);
  halves = new Uint32Array(0);
  n = 0;
  seen = false;
  constructor(readonly what: string) {}

  private reserve(extra: number): void {
    const need = this.n + extra;
    if (need <= this.arr.length) return;
    const next = new BigInt64Array(this.arr.length === 0 ? need : Math.max(need, this.arr.length * 2));
    next.set(this.arr.subarray(0, this.n));
    this.arr = next;
    this.halves = new Uint32Array(next.buffer);
  }

  private put(w: Wire): void {
    if (LITTLE_ENDIAN) {
      this.halves[2 * this.n] = w.lo;
      this.halves[2 * this.n + 1] = w.hi;
    } else {
      this.arr[this.n] = BigInt.asIntN(64, (BigInt(w.hi) << 32n) | BigInt(w.lo));
    }
    this.n++;
  }

  read(w: Wire, wireType: number): Decoding | undefined {
    this.seen = true;
    if (wireType === VARINT) {
      this.reserve(this.n === this.arr.length ? Math.max(1024, this.n) : 1);
      w.varint(w.end);
      this.put(w);
      return undefined;
    }
    if (wireType !== LEN) throw malformed(`wrong wireType ${wireType} for ${this.what}`);
    return this.readPacked(w, w.lengthEnd());
  }

  private *readPacked(w: Wire, end: number): Decoding {
    this.reserve(countVarints(w.buf, w.pos, end));
    if (LITTLE_ENDIAN) {
      while (end - w.pos >= 10) {
        this.readPackedHalves(w, end, w.pos + YIELD_BYTES);
        if (end - w.pos >= 10) yield;
      }
    }
    while (w.pos < end) {
      w.varint(end);
      this.put(w);
    }
  }

  /** Fast path: whole varints straight into the 32-bit view while ≥ 10 bytes remain (to `stop`). */
  private readPackedHalves(w: Wire, end: number, stop: number): void {
    const buf = w.buf;
    const halves = this.halves;
    let n = this.n;
    let p = w.pos;
    while (end - p >= 10 && p < stop) {
      let lo = 0;
      let hi = 0;
      let shift = 0;
      let b = 0;
      do {
        b = buf[p++];
        lo |= (b & 0x7f) << shift;
        shift += 7;
      } while (b >= 0x80 && shift < 28);
      if (b >= 0x80) {
        b = buf[p++];
        lo |= (b & 0x7f) << 28;
        hi = (b & 0x7f) >> 4;
        for (shift = 3; b >= 0x80 && shift < 31; shift += 7) {
          b = buf[p++];
          hi |= (b & 0x7f) << shift;
        }
        if (b >= 0x80) {
          // Tenth byte: only bit 63 may be set, and it must end the varint.
          b = buf[p++];
          if (b > 1) throw malformed('varint overflows 64 bits');
          hi |= b << 31;
        }
      }
      halves[2 * n] = lo;
      halves[2 * n + 1] = hi;
      n++;
    }
    this.n = n;
    w.pos = p;
  }

  result(): BigInt64Array {
    return this.n === this.arr.length ? this.arr : this.arr.slice(0, this.n);
  }
}

/**
 * Number of varints in a packed region: each ends with a byte below 0x80. Counted four bytes at a
 * time through an aligned 32-bit view (a byte-at-a-time scan costs as much as a third of decoding).
 */
function countVarints(buf: Uint8Array, start: number, end: number): number {
  let n = 0;
  let i = start;
  while (i < end && ((buf.byteOffset + i) & 3) !== 0) if (buf[i++] < 0x80) n++;
  const words = (end - i) >>> 2;
  if (words > 0) {
    const w32 = new Uint32Array(buf.buffer, buf.byteOffset + i, words);
    for (let k = 0; k < words; k++) {
      const x = (~w32[k] & 0x80808080) >>> 7;
      n += Math.imul(x, 0x01010101) >>> 24;
    }
    i += words * 4;
  }
  while (i < end) if (buf[i++] < 0x80) n++;
  return n;
}

function textView(buf: Uint8Array): Buffer {
  return Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
}

/**
 * Walks the top-level fields of a message, handing each (field, wireType) to `onField`; a
 * packed column comes back as work, run here, that yields between pieces of YIELD_BYTES.
 */
function* walk(buf: Uint8Array, onField: (w: Wire, field: number, wireType: number) => Decoding | undefined): Decoding {
  const w = new Wire(buf, buf.length);
  while (w.pos < w.end) {
    w.varint(w.end);
    if (w.hi !== 0) throw malformed('tag overflows 32 bits');
    const field = w.lo >>> 3;
    const wireType = w.lo & 7;
    if (field === 0) throw malformed('illegal tag 0');
    if (wireType === END_GROUP) throw malformed(`unexpected end group for field ${field}`);
    const work = onField(w, field, wireType);
    if (work !== undefined) yield* work;
  }
}

/**
 * Decoding work: suspended every YIELD_BYTES of packed IDs or values (about 10 ms), so that the
 * async decoders can let other requests in while a 100 MB body is decoded (≈0.5 s of work).
 */
type Decoding = Generator<void, void, undefined>;
const YIELD_BYTES = 1 << 20;

function drainDecoding(work: Decoding): void {
  while (work.next().done !== true);
}

/** Runs decoding work, returning to the event loop after each piece of about `sliceMs`. */
async function drainDecodingAsync(work: Decoding, sliceMs = 5): Promise<void> {
  let start = systemClock.monotonic();
  while (work.next().done !== true) {
    if (systemClock.monotonic() - start < sliceMs) continue;
    await new Promise<void>((resolve) => setImmediate(resolve));
    start = systemClock.monotonic();
  }
}

function expect(wireType: number, want: number, name: string): void {
  if (wireType !== want) throw malformed(`wrong wireType ${wireType} for field ${name}`);
}

/** Index, Field and Shard: tags 1–3 in both import messages. */
interface Header {
  index: string;
  field: string;
  shard: number;
}

/** Reads a header field into h; false when the tag is not one of them. */
function readHeader(h: Header, w: Wire, f: number, wt: number, text: Buffer): boolean {
  switch (f) {
    case 1:
      expect(wt, LEN, 'Index');
      h.index = w.string(text);
      return true;
    case 2:
      expect(wt, LEN, 'Field');
      h.field = w.string(text);
      return true;
    case 3:
      expect(wt, VARINT, 'Shard');
      h.shard = w.uint(w.end, 'shard');
      return true;
    default:
      return false;
  }
}

/**
 * Index, Field and Shard of an ImportRequest or ImportValueRequest (tags 1–3 in both), every other
 * field skipped unread (a packed column is skipped by its length): what cluster mode needs to
 * forward a client's body as it is, without decoding its IDs (the holder that applies it does).
 */
export function peekImportHeader(buf: Uint8Array): { index: string; field: string; shard: number } {
  const text = textView(buf);
  const h: Header = { index: '', field: '', shard: 0 };
  drainDecoding(
    walk(buf, (w, f, wt) => {
      if (!readHeader(h, w, f, wt, text)) w.skip(wt, f);
      return undefined;
    }),
  );
  return h;
}

export function decodeImportRequest(buf: Uint8Array): ImportRequest {
  const d = importRequestDecoding(buf);
  drainDecoding(d.work);
  return d.result();
}

/** decodeImportRequest, yielding to the event loop during large bodies. */
export async function decodeImportRequestAsync(buf: Uint8Array, sliceMs?: number): Promise<ImportRequest> {
  const d = importRequestDecoding(buf);
  await drainDecodingAsync(d.work, sliceMs);
  return d.result();
}

export function decodeImportValueRequest(buf: Uint8Array): ImportValueRequest {
  const d = importValueRequestDecoding(buf);
  drainDecoding(d.work);
  return d.result();
}

/** decodeImportValueRequest, yielding to the event loop during large bodies. */
export async function decodeImportValueRequestAsync(buf: Uint8Array, sliceMs?: number): Promise<ImportValueRequest> {
  const d = importValueRequestDecoding(buf);
  await drainDecodingAsync(d.work, sliceMs);
  return d.result();
}

function importRequestDecoding(buf: Uint8Array): { work: Decoding; result: () => ImportRequest } {
  const text = textView(buf);
  const h: Header = { index: '', field: '', shard: 0 };
  const rowIds = new IdColumn('row ID');
  const columnIds = new IdColumn('column ID', true);
  const timestamps = new Int64Column('timestamps');
  const rowKeys: string[] = [];
  const columnKeys: string[] = [];
  const work = walk(buf, (w, f, wt) => {
    if (readHeader(h, w, f, wt, text)) return undefined;
    switch (f) {
      case 4:
        return rowIds.read(w, wt);
      case 5:
        return columnIds.read(w, wt);
      case 6:
        return timestamps.read(w, wt);
      case 7:
        expect(wt, LEN, 'RowKeys');
        rowKeys.push(w.string(text));
        return undefined;
      case 8:
        expect(wt, LEN, 'ColumnKeys');
        columnKeys.push(w.string(text));
        return undefined;
      default:
        w.skip(wt, f);
        return undefined;
    }
  });
  const result = (): ImportRequest => ({
    ...h,
    rowIds: rowIds.narrow(),
    columnIds: columnIds.result(),
    timestamps: timestamps.seen ? timestamps.result() : null,
    rowKeys,
    columnKeys,
  });
  return { work, result };
}

function importValueRequestDecoding(buf: Uint8Array): { work: Decoding; result: () => ImportValueRequest } {
  const text = textView(buf);
  const h: Header = { index: '', field: '', shard: 0 };
  const columnIds = new IdColumn('column ID', true);
  const values = new Int64Column('values');
  const columnKeys: string[] = [];
  const work = walk(buf, (w, f, wt) => {
    if (readHeader(h, w, f, wt, text)) return undefined;
    switch (f) {
      case 5:
        return columnIds.read(w, wt);
      case 6:
        return values.read(w, wt);
      case 7:
        expect(wt, LEN, 'ColumnKeys');
        columnKeys.push(w.string(text));
        return undefined;
      default:
        w.skip(wt, f);
        return undefined;
    }
  });
  return { work, result: () => ({ ...h, columnIds: columnIds.result(), values: values.result(), columnKeys }) };
}
