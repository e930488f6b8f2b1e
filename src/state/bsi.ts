// Bit-sliced int storage inside one fragment of view `bsig_<field>` (Pilosa 1.4 "v2" layout):
// row 0 = exists, row 1 = sign (value − base < 0), rows 2… = magnitude bits of |value − base|,
// least significant first. Sign-magnitude keeps every stored value exact over the whole signed
// 64-bit range: |value − base| can reach 2^64 − 1, so magnitudes are bigint, never number.
//
// Writers (setValues, clearValues) are called only from apply(). Readers return fresh bitmaps
// and never mutate the fragment.
import type { ReadonlyRoaringBitmap32 } from 'roaring';
import { LITTLE_ENDIAN } from '../util/endian.js';
import { RoaringBitmap32, type Bitmap } from '../roaring/bitmap.js';
import type { Fragment } from './fragment.js';
import type { ReadonlyFragment } from './readonly.js';

export const BSI_EXISTS_ROW = 0;
export const BSI_SIGN_ROW = 1;
export const BSI_OFFSET_ROW = 2;

type RO = ReadonlyRoaringBitmap32;
const EMPTY: RO = new RoaringBitmap32().freeze();

/** Magnitude bits needed to store every value of `values` relative to `base`. */
export function bitDepthFor(values: BigInt64Array, base: bigint): number {
  let max = 0n;
  for (let i = 0; i < values.length; i++) {
    const d = values[i] - base;
    const m = d < 0n ? -d : d;
    if (m > max) max = m;
  }
  return bitLength(max);
}

export function bitLength(x: bigint): number {
  return x === 0n ? 0 : x.toString(2).length;
}

/** Largest magnitude representable with `bitDepth` bits. */
export const maxMagnitude = (bitDepth: number): bigint => (1n << BigInt(bitDepth)) - 1n;

/**
 * Stores values for column offsets (the last one wins for a repeated offset). Rows 1…bitDepth+1
 * are cleared for those columns first, so stale high bits of an old, larger value never survive;
 * then each row gets its set bits in one addMany-style batch.
 */
/** Below this many columns, per-bit edits beat building a bitmap per row (Set() calls, replay). */
const SMALL_BATCH = 16;

export function setValues(
  frag: Fragment,
  offsets: Uint32Array,
  values: BigInt64Array,
  base: bigint,
  bitDepth: number,
): void {
  const order = lastWins(offsets);
  if (order.length <= SMALL_BATCH) {
    for (const i of order) setOne(frag, offsets[i], values[i] - base, bitDepth);
    return;
  }
  // Magnitudes as two 32-bit halves per column (per-bit tests on numbers are far cheaper than
  // on bigint), then each row's columns gathered in one sequential pass into a scratch array.
  const n = order.length;
  const offs = new Uint32Array(n);
  const los = new Uint32Array(n);
  const his = new Uint32Array(n);
  const negs = new Uint8Array(n);
  // With base 0 (the usual case) the halves are read straight from the values' memory: no
  // bigint is created per value at all.
  const halves =
    base === 0n && LITTLE_ENDIAN ? new Uint32Array(values.buffer, values.byteOffset, values.length * 2) : undefined;
  for (let k = 0; k < n; k++) {
    const i = order[k];
    offs[k] = offsets[i];
    if (halves !== undefined) {
      let lo = halves[2 * i];
      let hi = halves[2 * i + 1];
      if (hi >= 0x80000000) {
        // |v| of a two's-complement 64-bit v: invert both halves and add one, carrying.
        lo = (~lo + 1) >>> 0;
        hi = (~hi + (lo === 0 ? 1 : 0)) >>> 0;
        negs[k] = 1;
      }
      los[k] = lo;
      his[k] = hi;
    } else {
      const d = values[i] - base;
      const mag = d < 0n ? -d : d;
      if (d < 0n) negs[k] = 1;
      los[k] = Number(mag & 0xffffffffn);
      his[k] = Number(mag >> 32n);
    }
  }
  const all = new RoaringBitmap32(offs);
  frag.addBits(BSI_EXISTS_ROW, all);
  const picked = new Uint32Array(n);
  for (let row = BSI_SIGN_ROW; row < bitDepth + 2; row++) {
    frag.removeBits(row, all);
    let m = 0;
    if (row === BSI_SIGN_ROW) {
      for (let k = 0; k < n; k++) if (negs[k] === 1) picked[m++] = offs[k];
    } else {
      const b = row - BSI_OFFSET_ROW;
      const words = b < 32 ? los : his;
      const bit = b & 31;
      for (let k = 0; k < n; k++) if (((words[k] >>> bit) & 1) === 1) picked[m++] = offs[k];
    }
    if (m > 0) frag.addBits(row, picked.subarray(0, m));
  }
}

/**
 * One column: exists, sign and every magnitude bit written (or cleared) in place. A column that
 * had no value has no bit in any row (writers keep rows 1… inside the exists row), so only its
 * set bits need writing: about half the native calls, for the commonest case of a first value.
 */
function setOne(frag: Fragment, off: number, d: bigint, bitDepth: number): void {
  const fresh = frag.add(BSI_EXISTS_ROW, off);
  if (d < 0n) frag.add(BSI_SIGN_ROW, off);
  else if (!fresh) frag.remove(BSI_SIGN_ROW, off);
  const mag = d < 0n ? -d : d;
  const lo = Number(mag & 0xffffffffn);
  const hi = Number(mag >> 32n);
  for (let b = 0; b < bitDepth; b++) {
    const bit = b < 32 ? (lo >>> b) & 1 : (hi >>> (b - 32)) & 1;
    if (bit === 1) frag.add(BSI_OFFSET_ROW + b, off);
    else if (!fresh) frag.remove(BSI_OFFSET_ROW + b, off);
  }
}

/** Removes the values of these column offsets (exists, sign and every magnitude row). */
export function clearValues(frag: Fragment, offsets: Uint32Array, bitDepth: number): void {
  const bm = RoaringBitmap32.from(offsets);
  for (let row = 0; row < bitDepth + 2; row++) frag.removeBits(row, bm);
}

/** Indexes of `offsets` to write, keeping only the last occurrence of each offset. */
function lastWins(offsets: Uint32Array): number[] {
  let increasing = true;
  for (let i = 1; i < offsets.length && increasing; i++) increasing = offsets[i] > offsets[i - 1];
  if (increasing) return Array.from(offsets.keys());
  const last = new Map<number, number>();
  for (let i = 0; i < offsets.length; i++) last.set(offsets[i], i);
  return [...last.values()];
}

// ---------------------------------------------------------------------------------------------
// Read side

const rowOf = (frag: ReadonlyFragment, row: number): RO => frag.row(row) ?? EMPTY;

/** The stored value of one column, or undefined when it has none. */
export function bsiValue(frag: ReadonlyFragment, offset: number, base: bigint, bitDepth: number): bigint | undefined {
  if (!frag.has(BSI_EXISTS_ROW, offset)) return undefined;
  let mag = 0n;
  for (let b = 0; b < bitDepth; b++) if (frag.has(BSI_OFFSET_ROW + b, offset)) mag |= 1n << BigInt(b);
  return (frag.has(BSI_SIGN_ROW, offset) ? -mag : mag) + base;
}

/** Columns holding a value (∩ filter). */
export function bsiExisting(frag: ReadonlyFragment, filter?: RO): Bitmap {
  const e = rowOf(frag, BSI_EXISTS_ROW);
  return filter === undefined ? RoaringBitmap32.or(e, EMPTY) : RoaringBitmap32.and(e, filter);
}

export interface ValCount {
  value: bigint;
  count: number;
}

/** Sum and count of the values of the columns in filter (all columns without one). */
export function bsiSum(frag: ReadonlyFragment, filter: RO | undefined, base: bigint, bitDepth: number): ValCount {
  const sign = frag.row(BSI_SIGN_ROW);
  if (sign === undefined || (filter !== undefined && !sign.intersects(filter)))
    return sumNonNegative(frag, filter, base, bitDepth);
  const exists = bsiExisting(frag, filter);
  const count = exists.size;
  if (count === 0) return { value: 0n, count: 0 };
  // Only the filtered columns' signs count (Pilosa 1.4 subtracts every negative of the shard).
  const neg = RoaringBitmap32.and(exists, sign);
  const pos = RoaringBitmap32.andNot(exists, sign);
  let sum = 0n;
  for (let b = 0; b < bitDepth; b++) {
    const r = frag.row(BSI_OFFSET_ROW + b);
    if (r === undefined) continue;
    const diff = r.andCardinality(pos) - r.andCardinality(neg);
    if (diff !== 0) sum += BigInt(diff) << BigInt(b);
  }
  return { value: sum + BigInt(count) * base, count };
}

/**
 * The common case, no negative magnitudes among the filtered columns: magnitude rows only hold
 * columns that have a value, so cardinalities need no intermediate bitmap at all.
 */
function sumNonNegative(frag: ReadonlyFragment, filter: RO | undefined, base: bigint, bitDepth: number): ValCount {
  const exists = frag.row(BSI_EXISTS_ROW);
  if (exists === undefined) return { value: 0n, count: 0 };
  const count = filter === undefined ? exists.size : exists.andCardinality(filter);
  if (count === 0) return { value: 0n, count: 0 };
  let sum = 0n;
  for (let b = 0; b < bitDepth; b++) {
    const r = frag.row(BSI_OFFSET_ROW + b);
    if (r === undefined) continue;
    const n = filter === undefined ? r.size : r.andCardinality(filter);
    if (n !== 0) sum += BigInt(n) << BigInt(b);
  }
  return { value: sum + BigInt(count) * base, count };
}

/** The smallest value among the filtered columns and how many columns hold it. */
export function bsiMin(
  frag: ReadonlyFragment,
  filter: RO | undefined,
  base: bigint,
  bitDepth: number,
): ValCount | undefined {
  const { pos, neg } = split(frag, filter);
  if (!neg.isEmpty) {
    const r = maxMag(frag, neg, bitDepth);
    return { value: -r.mag + base, count: r.count };
  }
  if (pos.isEmpty) return undefined;
  const r = minMag(frag, pos, bitDepth);
  return { value: r.mag + base, count: r.count };
}

/** The largest value among the filtered columns and how many columns hold it. */
export function bsiMax(
  frag: ReadonlyFragment,
  filter: RO | undefined,
  base: bigint,
  bitDepth: number,
): ValCount | undefined {
  const { pos, neg } = split(frag, filter);
  if (!pos.isEmpty) {
    const r = maxMag(frag, pos, bitDepth);
    return { value: r.mag + base, count: r.count };
  }
  if (neg.isEmpty) return undefined;
  const r = minMag(frag, neg, bitDepth);
  return { value: -r.mag + base, count: r.count };
}

function split(frag: ReadonlyFragment, filter: RO | undefined): { pos: Bitmap; neg: Bitmap } {
  const exists = bsiExisting(frag, filter);
  const sign = rowOf(frag, BSI_SIGN_ROW);
  return { pos: RoaringBitmap32.andNot(exists, sign), neg: RoaringBitmap32.and(exists, sign) };
}

function maxMag(frag: ReadonlyFragment, set: RO, bitDepth: number): { mag: bigint; count: number } {
  let cand: RO = set;
  let mag = 0n;
  for (let b = bitDepth - 1; b >= 0; b--) {
    const r = frag.row(BSI_OFFSET_ROW + b);
    if (r === undefined) continue;
    const t = RoaringBitmap32.and(cand, r);
    if (!t.isEmpty) {
      cand = t;
      mag |= 1n << BigInt(b);
    }
  }
  return { mag, count: cand.size };
}

function minMag(frag: ReadonlyFragment, set: RO, bitDepth: number): { mag: bigint; count: number } {
  let cand: RO = set;
  let mag = 0n;
  for (let b = bitDepth - 1; b >= 0; b--) {
    const r = frag.row(BSI_OFFSET_ROW + b);
    if (r === undefined) continue;
    const t = RoaringBitmap32.andNot(cand, r);
    if (!t.isEmpty) cand = t;
    else mag |= 1n << BigInt(b);
  }
  return { mag, count: cand.size };
}

export type BsiPredicate =
  | { op: '==' | '!=' | '<' | '<=' | '>' | '>='; value: bigint }
  | { op: 'between'; lo: bigint; hi: bigint }
  | { op: 'notNull' };

/**
 * Columns whose value satisfies the predicate. Exact for every int64 predicate: the comparison is
 * done on value − base in bigint, and a predicate beyond the stored bit depth simply selects all
 * or nothing of the relevant sign class (Pilosa's clamping, without its off-by-one near zero).
 */
export function bsiRange(frag: ReadonlyFragment, pred: BsiPredicate, base: bigint, bitDepth: number): Bitmap {
  const exists = rowOf(frag, BSI_EXISTS_ROW);
  if (exists.isEmpty) return new RoaringBitmap32();
  const r = new BsiRanger(frag, bitDepth);
  switch (pred.op) {
    case 'notNull':
      return RoaringBitmap32.or(exists, EMPTY);
    case '==':
      return fresh(r.eq(pred.value - base));
    case '!=':
      return RoaringBitmap32.andNot(exists, r.eq(pred.value - base));
    case '<=':
      return fresh(r.le(pred.value - base));
    case '<':
      return fresh(r.le(pred.value - base - 1n));
    case '>=':
      return fresh(r.ge(pred.value - base));
    case '>':
      return fresh(r.ge(pred.value - base + 1n));
    case 'between':
      return fresh(r.between(pred.lo - base, pred.hi - base));
  }
}

const fresh = (b: RO): Bitmap => RoaringBitmap32.or(b, EMPTY);

/** Comparisons on stored (value − base) numbers, split into the positive and negative classes. */
class BsiRanger {
  private readonly pos: RO;
  private readonly neg: RO;
  private readonly max: bigint;

  constructor(
    private readonly frag: ReadonlyFragment,
    private readonly bitDepth: number,
  ) {
    const exists = rowOf(frag, BSI_EXISTS_ROW);
    const sign = rowOf(frag, BSI_SIGN_ROW);
    this.pos = RoaringBitmap32.andNot(exists, sign);
    this.neg = RoaringBitmap32.and(exists, sign);
    this.max = maxMagnitude(bitDepth);
  }

  eq(q: bigint): RO {
    return q >= 0n ? this.magEq(this.pos, q) : this.magEq(this.neg, -q);
  }

  /** stored ≤ q */
  le(q: bigint): RO {
    if (q >= 0n) return RoaringBitmap32.or(this.neg, this.magLE(this.pos, q));
    return this.magGE(this.neg, -q);
  }

  /** stored ≥ q */
  ge(q: bigint): RO {
    if (q > 0n) return this.magGE(this.pos, q);
    return RoaringBitmap32.or(this.pos, this.magLE(this.neg, -q));
  }

  between(lo: bigint, hi: bigint): RO {
    if (lo > hi) return EMPTY;
    if (lo >= 0n) return RoaringBitmap32.and(this.magGE(this.pos, lo), this.magLE(this.pos, hi));
    if (hi < 0n) return RoaringBitmap32.and(this.magGE(this.neg, -hi), this.magLE(this.neg, -lo));
    return RoaringBitmap32.or(this.magLE(this.neg, -lo), this.magLE(this.pos, hi));
  }

  private bitRow(b: number): RO {
    return rowOf(this.frag, BSI_OFFSET_ROW + b);
  }

  private magEq(set: RO, m: bigint): RO {
    if (m > this.max) return EMPTY;
    let eq: RO = set;
    for (let b = this.bitDepth - 1; b >= 0 && !eq.isEmpty; b--) {
      eq = testBit(m, b) ? RoaringBitmap32.and(eq, this.bitRow(b)) : RoaringBitmap32.andNot(eq, this.bitRow(b));
    }
    return eq;
  }

  private magLE(set: RO, m: bigint): RO {
    if (m >= this.max) return set;
    const lt = new RoaringBitmap32();
    let eq: RO = set;
    for (let b = this.bitDepth - 1; b >= 0 && !eq.isEmpty; b--) {
      const r = this.bitRow(b);
      if (testBit(m, b)) {
        lt.orInPlace(RoaringBitmap32.andNot(eq, r));
        eq = RoaringBitmap32.and(eq, r);
      } else {
        eq = RoaringBitmap32.andNot(eq, r);
      }
    }
    return RoaringBitmap32.or(lt, eq);
  }

  private magGE(set: RO, m: bigint): RO {
    if (m <= 0n) return set;
    if (m > this.max) return EMPTY;
    const gt = new RoaringBitmap32();
    let eq: RO = set;
    for (let b = this.bitDepth - 1; b >= 0 && !eq.isEmpty; b--) {
      const r = this.bitRow(b);
      if (testBit(m, b)) {
        eq = RoaringBitmap32.and(eq, r);
      } else {
        gt.orInPlace(RoaringBitmap32.and(eq, r));
        eq = RoaringBitmap32.andNot(eq, r);
      }
    }
    return RoaringBitmap32.or(gt, eq);
  }
}

const testBit = (m: bigint, b: number): boolean => ((m >> BigInt(b)) & 1n) === 1n;
