// Roaring file codec for import-roaring and export: Pilosa's format (cookie 12348, 64-bit keys,
// runs as inclusive [start, last]) and the official portable format (cookies 12346/12347, 16-bit
// keys, runs as start + length). Bits are fragment positions, row·2^20 + column offset, so
// container key k holds row ⌊k/16⌋ at offsets (k mod 16)·2^16 + low16.
// The Pilosa op log that may follow the containers is ignored (import bodies carry none).
import { assert } from '../util/assert.js';
import { type Bitmap, RoaringBitmap32 } from './bitmap.js';

const PILOSA_COOKIE = 12348;
const SERIAL_COOKIE_NO_RUN = 12346;
const SERIAL_COOKIE = 12347;
const PILOSA_VERSION = 0;
/** Official format: a run-flagged file carries no offset table below this many containers. */
const NO_OFFSET_THRESHOLD = 4;

const ARRAY = 1;
const BITMAP = 2;
const RUN = 3;

const ARRAY_MAX = 4096;
const BITMAP_BYTES = 8192;
const CONTAINERS_PER_ROW = 16; // 2^20 / 2^16
/** Pilosa keys are position >> 16 of a u64 position, so they stay below 2^48. */
const MAX_KEY = 2 ** 48;

/**
 * Malformed roaring input. roaring/ sits below domain/, so it names its own error; the import
 * service turns it into a 400 with this message (docs/ARCHITECTURE.md, "Errors").
 */
export class RoaringFormatError extends Error {
  override name = 'RoaringFormatError';
}

const invalid = (what: string): RoaringFormatError => new RoaringFormatError(`unmarshaling roaring data: ${what}`);

/** Container directory as parallel arrays: one entry per container, in file order. */
interface Directory {
  buf: Uint8Array;
  view: DataView;
  count: number;
  keys: Float64Array;
  types: Uint8Array;
  cards: Uint32Array;
  /** Byte offset of the container body. */
  offsets: Float64Array;
  /** Official format: runs are start + length; Pilosa: start + last. */
  runLengths: boolean;
}

function newDirectory(view: DataView, count: number, runLengths: boolean): Directory {
  return {
    buf: new Uint8Array(view.buffer, view.byteOffset, view.byteLength),
    view,
    count,
    keys: new Float64Array(count),
    types: new Uint8Array(count),
    cards: new Uint32Array(count),
    offsets: new Float64Array(count),
    runLengths,
  };
}

function need(view: DataView, end: number, what: string): void {
  if (end > view.byteLength) throw invalid(`data truncated in ${what}: need ${end} bytes, have ${view.byteLength}`);
}

function bodySize(view: DataView, type: number, card: number, offset: number): number {
  switch (type) {
    case ARRAY:
      return 2 * card;
    case BITMAP:
      return BITMAP_BYTES;
    case RUN:
      need(view, offset + 2, 'run container');
      return 2 + 4 * view.getUint16(offset, true);
    default:
      throw invalid(`unknown container type ${type}`);
  }
}

function readPilosaDirectory(view: DataView): Directory {
  need(view, 8, 'header');
  const version = view.getUint8(2);
  if (version !== PILOSA_VERSION) throw invalid(`wrong roaring version, file is v${version}, server requires v0`);
  const count = view.getUint32(4, true);
  const headerEnd = 8 + count * 12;
  need(view, headerEnd + count * 4, 'container headers');
  const dir = newDirectory(view, count, false);
  for (let i = 0; i < count; i++) {
    const h = 8 + i * 12;
    const hi = view.getUint32(h + 4, true);
    const key = hi * 2 ** 32 + view.getUint32(h, true);
    if (key >= MAX_KEY) throw invalid(`container key ${key} out of range`);
    dir.keys[i] = key;
    dir.types[i] = view.getUint16(h + 8, true);
    dir.cards[i] = view.getUint16(h + 10, true) + 1;
    const offset = view.getUint32(headerEnd + i * 4, true);
    if (offset >= view.byteLength) throw invalid(`offset out of bounds: off=${offset}, len=${view.byteLength}`);
    dir.offsets[i] = offset;
    need(view, offset + bodySize(view, dir.types[i], dir.cards[i], offset), `container ${i}`);
  }
  return dir;
}

function readOfficialDirectory(view: DataView, cookie: number): Directory {
  let count: number;
  let pos: number;
  let runFlags: Uint8Array | null = null;
  if (cookie === SERIAL_COOKIE_NO_RUN) {
    need(view, 8, 'header');
    count = view.getUint32(4, true);
    pos = 8;
  } else {
    count = view.getUint16(2, true) + 1;
    const flagBytes = Math.ceil(count / 8);
    need(view, 4 + flagBytes, 'run flags');
    runFlags = new Uint8Array(view.buffer, view.byteOffset + 4, flagBytes);
    pos = 4 + flagBytes;
  }
  const headerAt = pos;
  need(view, headerAt + count * 4, 'container headers');
  pos += count * 4;
  // The offset table, when present, is redundant: bodies are contiguous in header order.
  if (runFlags === null || count >= NO_OFFSET_THRESHOLD) pos += count * 4;
  const dir = newDirectory(view, count, true);
  for (let i = 0; i < count; i++) {
    dir.keys[i] = view.getUint16(headerAt + i * 4, true);
    const card = view.getUint16(headerAt + i * 4 + 2, true) + 1;
    const isRun = runFlags !== null && (runFlags[i >>> 3] & (1 << (i & 7))) !== 0;
    dir.types[i] = isRun ? RUN : card <= ARRAY_MAX ? ARRAY : BITMAP;
    dir.cards[i] = card;
    dir.offsets[i] = pos;
    pos += bodySize(view, dir.types[i], card, pos);
    need(view, pos, `container ${i}`);
  }
  return dir;
}

// ---- Decoding: each row's containers are validated and re-framed as a portable roaring
// bitmap of column offsets (16-bit keys = key mod 16), which CRoaring deserializes natively:
// mostly memcpy, instead of expanding every bit through JavaScript.

/** Portable run-flagged cookie for `count` containers. */
const portableCookie = (count: number): number => (SERIAL_COOKIE | ((count - 1) << 16)) >>> 0;

const popcount = (x: number): number => {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
};

/** Checks container i's body against its header; returns its true cardinality. */
function validate(dir: Directory, i: number): number {
  const view = dir.view;
  const offset = dir.offsets[i];
  const card = dir.cards[i];
  switch (dir.types[i]) {
    case ARRAY: {
      let prev = -1;
      for (let k = 0; k < card; k++) {
        const v = view.getUint16(offset + 2 * k, true);
        if (v <= prev) throw invalid(`array container ${i} is not strictly increasing`);
        prev = v;
      }
      return card;
    }
    case BITMAP: {
      let n = 0;
      for (let k = 0; k < BITMAP_BYTES / 4; k++) n += popcount(view.getUint32(offset + 4 * k, true));
      if (n !== card) throw invalid(`bitmap container ${i} holds ${n} values but its header says ${card}`);
      return n;
    }
    default: {
      const runs = view.getUint16(offset, true);
      let n = 0;
      let prevLast = -1;
      for (let r = 0; r < runs; r++) {
        const start = view.getUint16(offset + 2 + 4 * r, true);
        const second = view.getUint16(offset + 4 + 4 * r, true);
        const last = dir.runLengths ? start + second : second;
        if (start <= prevLast || last < start || last > 0xffff) {
          throw invalid(`run container ${i} has a bad or overlapping run [${start}, ${last}]`);
        }
        n += last - start + 1;
        prevLast = last;
      }
      if (n !== card) throw invalid(`run container ${i} holds ${n} values but its header says ${card}`);
      return n;
    }
  }
}

/** Portable container type for a validated input container: arrays hold at most 4096 values. */
function outputType(type: number, card: number): number {
  if (type === RUN) return RUN;
  return card <= ARRAY_MAX ? ARRAY : BITMAP;
}

function outputSize(dir: Directory, i: number, type: number): number {
  if (type === RUN) return 2 + 4 * dir.view.getUint16(dir.offsets[i], true);
  return type === ARRAY ? 2 * dir.cards[i] : BITMAP_BYTES;
}

/** Writes container i's body in portable form at `at` of `out`. */
function writePortable(dir: Directory, i: number, type: number, out: Uint8Array, at: number): void {
  const view = dir.view;
  const offset = dir.offsets[i];
  const card = dir.cards[i];
  const inType = dir.types[i];
  const outView = new DataView(out.buffer, out.byteOffset, out.byteLength);
  if (type === inType && (type !== RUN || dir.runLengths)) {
    out.set(dir.buf.subarray(offset, offset + outputSize(dir, i, type)), at);
  } else if (type === RUN) {
    // Pilosa's inclusive last → official length.
    const runs = view.getUint16(offset, true);
    outView.setUint16(at, runs, true);
    for (let r = 0; r < runs; r++) {
      const start = view.getUint16(offset + 2 + 4 * r, true);
      outView.setUint16(at + 2 + 4 * r, start, true);
      outView.setUint16(at + 4 + 4 * r, view.getUint16(offset + 4 + 4 * r, true) - start, true);
    }
  } else if (type === ARRAY) {
    // A sparse bitmap container: list its bits.
    let n = 0;
    for (let k = 0; k < BITMAP_BYTES / 4; k++) {
      let word = view.getUint32(offset + 4 * k, true);
      while (word !== 0) {
        const low = word & -word;
        outView.setUint16(at + 2 * n++, k * 32 + (31 - Math.clz32(low)), true);
        word ^= low;
      }
    }
  } else {
    // An oversized array container: set its bits.
    const words = new Uint32Array(BITMAP_BYTES / 4);
    for (let k = 0; k < card; k++) {
      const v = view.getUint16(offset + 2 * k, true);
      words[v >>> 5] |= 1 << (v & 31);
    }
    for (let k = 0; k < words.length; k++) outView.setUint32(at + 4 * k, words[k], true);
  }
}

/** Containers first..last (one row) as a portable roaring bitmap of column offsets. */
function rowBitmap(dir: Directory, first: number, last: number): Bitmap {
  const count = last - first + 1;
  const types = new Uint8Array(count);
  const flagBytes = Math.ceil(count / 8);
  const headerAt = 4 + flagBytes;
  let size = headerAt + 4 * count + (count >= NO_OFFSET_THRESHOLD ? 4 * count : 0);
  const bodyAt = size;
  for (let c = 0; c < count; c++) {
    const i = first + c;
    types[c] = outputType(dir.types[i], validate(dir, i));
    size += outputSize(dir, i, types[c]);
  }
  const out = new Uint8Array(size);
  const outView = new DataView(out.buffer);
  outView.setUint32(0, portableCookie(count), true);
  let at = bodyAt;
  for (let c = 0; c < count; c++) {
    const i = first + c;
    if (types[c] === RUN) out[4 + (c >>> 3)] |= 1 << (c & 7);
    outView.setUint16(headerAt + 4 * c, dir.keys[i] % CONTAINERS_PER_ROW, true);
    outView.setUint16(headerAt + 4 * c + 2, dir.cards[i] - 1, true);
    if (count >= NO_OFFSET_THRESHOLD) outView.setUint32(headerAt + 4 * count + 4 * c, at, true);
    writePortable(dir, i, types[c], out, at);
    at += outputSize(dir, i, types[c]);
  }
  return RoaringBitmap32.deserialize(out, 'portable');
}

/**
 * Decodes either roaring format into rows of column offsets (row → bitmap of column % 2^20).
 * Empty input decodes to no rows. Bad input throws a RoaringFormatError.
 */
export function decodeRoaringPositions(buf: Uint8Array): Map<number, Bitmap> {
  const rows = new Map<number, Bitmap>();
  if (buf.length === 0) return rows;
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  need(view, 4, 'header');
  const cookie16 = view.getUint16(0, true);
  let dir: Directory;
  if (cookie16 === PILOSA_COOKIE) dir = readPilosaDirectory(view);
  else if (cookie16 === SERIAL_COOKIE) dir = readOfficialDirectory(view, SERIAL_COOKIE);
  else if (view.getUint32(0, true) === SERIAL_COOKIE_NO_RUN) dir = readOfficialDirectory(view, SERIAL_COOKIE_NO_RUN);
  else throw invalid(`unknown roaring cookie ${view.getUint32(0, true)}`);

  for (let i = 1; i < dir.count; i++) {
    if (dir.keys[i] <= dir.keys[i - 1]) throw invalid('container keys are not strictly increasing');
  }
  // Keys ascend, so each row's containers (at most 16) are adjacent.
  for (let first = 0; first < dir.count; ) {
    const row = Math.floor(dir.keys[first] / CONTAINERS_PER_ROW);
    let last = first;
    while (last + 1 < dir.count && Math.floor(dir.keys[last + 1] / CONTAINERS_PER_ROW) === row) last++;
    rows.set(row, rowBitmap(dir, first, last));
    first = last + 1;
  }
  return rows;
}

/** Number of runs of consecutive values in a sorted slice. */
function countRuns(values: Uint32Array): number {
  let runs = values.length > 0 ? 1 : 0;
  for (let i = 1; i < values.length; i++) if (values[i] !== values[i - 1] + 1) runs++;
  return runs;
}

interface Container {
  key: number;
  type: number;
  /** Low 16 bits of each value, ascending. */
  values: Uint32Array;
  runs: number;
  size: number;
}

function plan(key: number, values: Uint32Array, useRuns: boolean): Container {
  const runs = useRuns ? countRuns(values) : 0;
  const arraySize = 2 * values.length;
  const best = values.length <= ARRAY_MAX ? arraySize : BITMAP_BYTES;
  if (useRuns && 2 + 4 * runs < best) return { key, type: RUN, values, runs, size: 2 + 4 * runs };
  return { key, type: values.length <= ARRAY_MAX ? ARRAY : BITMAP, values, runs, size: best };
}

function writeBody(view: DataView, at: number, c: Container): void {
  const v = c.values;
  if (c.type === ARRAY) {
    for (let k = 0; k < v.length; k++) view.setUint16(at + 2 * k, v[k] & 0xffff, true);
  } else if (c.type === BITMAP) {
    const words = new Uint32Array(BITMAP_BYTES / 4);
    for (let k = 0; k < v.length; k++) words[(v[k] & 0xffff) >>> 5] |= 1 << (v[k] & 31);
    for (let k = 0; k < words.length; k++) view.setUint32(at + 4 * k, words[k], true);
  } else {
    view.setUint16(at, c.runs, true);
    let r = 0;
    for (let k = 0; k < v.length; ) {
      let j = k;
      while (j + 1 < v.length && v[j + 1] === v[j] + 1) j++;
      view.setUint16(at + 2 + 4 * r, v[k] & 0xffff, true);
      view.setUint16(at + 4 + 4 * r, v[j] & 0xffff, true); // inclusive last, Pilosa-style
      r++;
      k = j + 1;
    }
  }
}

/**
 * Encodes rows of column offsets (each < 2^20) as a Pilosa roaring file with no op log: array
 * containers up to 4096 values, bitmaps above, and run containers when `runs` and smaller.
 */
export function encodePilosaRoaring(rows: Map<number, Bitmap>, opts: { runs?: boolean } = {}): Uint8Array {
  const containers: Container[] = [];
  for (const [row, bitmap] of [...rows].sort(([a], [b]) => a - b)) {
    assert(Number.isSafeInteger(row) && row >= 0 && row < MAX_KEY / CONTAINERS_PER_ROW, `bad row ${row}`);
    const values = bitmap.toUint32Array();
    assert(values.length === 0 || values[values.length - 1] < 2 ** 20, `row ${row} has an offset ≥ 2^20`);
    for (let start = 0; start < values.length; ) {
      const high = values[start] >>> 16;
      let end = start;
      while (end < values.length && values[end] >>> 16 === high) end++;
      containers.push(plan(row * CONTAINERS_PER_ROW + high, values.subarray(start, end), opts.runs ?? false));
      start = end;
    }
  }
  const headerEnd = 8 + containers.length * 12;
  let size = headerEnd + containers.length * 4;
  for (const c of containers) size += c.size;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint16(0, PILOSA_COOKIE, true);
  view.setUint8(2, PILOSA_VERSION);
  view.setUint8(3, 0);
  view.setUint32(4, containers.length, true);
  let body = headerEnd + containers.length * 4;
  containers.forEach((c, i) => {
    const h = 8 + i * 12;
    view.setUint32(h, c.key % 2 ** 32, true);
    view.setUint32(h + 4, Math.floor(c.key / 2 ** 32), true);
    view.setUint16(h + 8, c.type, true);
    view.setUint16(h + 10, c.values.length - 1, true);
    view.setUint32(headerEnd + 4 * i, body, true);
    writeBody(view, body, c);
    body += c.size;
  });
  return out;
}
