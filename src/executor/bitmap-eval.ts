// Per-shard evaluation of bitmap plans. Results may be live fragment rows: they are typed
// read-only and never mutated; every combination builds a new bitmap. Counting a combination
// uses the *Cardinality operations, so Count(Intersect(a, b)) never builds the intersection.
import type { ReadonlyRoaringBitmap32 } from 'roaring';
import { EXISTS_FIELD, STANDARD_VIEW, bsiViewName } from '../domain/names.js';
import { type ColumnId, columnIdOf, MAX_SAFE_SHARD, MAX_SHARD, SHARD_WIDTH } from '../domain/shard.js';
import { bsiRange } from '../state/bsi.js';
import { RoaringBitmap32 } from '../roaring/bitmap.js';
import type { ReadContext } from './context.js';
import type { ReadonlyView } from '../state/readonly.js';
import type { BitmapPlan } from './plan.js';
import { resolveRow } from './refs.js';
import { SHARD_COLUMNS_FROM, ShardColumns, type ShardOffsets } from './shard-columns.js';

export type RO = ReadonlyRoaringBitmap32;
export const EMPTY: RO = new RoaringBitmap32().freeze();

// Module-level so that counting allocates no closures per shard.
type Op = (a: RO, b: RO) => RO;
type Card = (a: RO, b: RO) => number;
const AND: Op = (a, b) => RoaringBitmap32.and(a, b);
const OR: Op = (a, b) => RoaringBitmap32.or(a, b);
const AND_NOT: Op = (a, b) => RoaringBitmap32.andNot(a, b);
const XOR: Op = (a, b) => RoaringBitmap32.xor(a, b);
const AND_CARD: Card = (a, b) => a.andCardinality(b);
const OR_CARD: Card = (a, b) => a.orCardinality(b);
const AND_NOT_CARD: Card = (a, b) => a.andNotCardinality(b);
const XOR_CARD: Card = (a, b) => a.xorCardinality(b);

export function bitmapAt(ctx: ReadContext, p: BitmapPlan, shard: number): RO {
  switch (p.kind) {
    case 'row': {
      const id = resolveRow(ctx.index, p.field, p.row);
      return id === undefined ? EMPTY : (ctx.fragment(p.field, p.view ?? STANDARD_VIEW, shard)?.row(id) ?? EMPTY);
    }
    case 'timeRow': {
      const id = resolveRow(ctx.index, p.field, p.row);
      if (id === undefined) return EMPTY;
      const rows: RO[] = [];
      for (const v of ctx.timeViews(p, p.field, p.from, p.to)) {
        const r = ctx.fragment(p.field, v, shard)?.row(id);
        if (r !== undefined) rows.push(r);
      }
      return rows.length === 0 ? EMPTY : rows.length === 1 ? rows[0] : RoaringBitmap32.orMany(rows);
    }
    case 'bsi': {
      const frag = ctx.fragment(p.field, bsiViewName(p.field.name), shard);
      return frag === undefined ? EMPTY : bsiRange(frag, p.pred, p.field.base, p.field.bitDepth);
    }
    case 'empty':
      return EMPTY;
    case 'union':
      return p.children.length === 0 ? EMPTY : RoaringBitmap32.orMany(p.children.map((c) => bitmapAt(ctx, c, shard)));
    case 'xor':
      return p.children.length === 0 ? EMPTY : RoaringBitmap32.xorMany(p.children.map((c) => bitmapAt(ctx, c, shard)));
    case 'intersect':
      return fold(ctx, p.children, shard, AND);
    case 'difference':
      return fold(ctx, p.children, shard, AND_NOT);
    case 'not':
      return RoaringBitmap32.andNot(existence(ctx, shard), bitmapAt(ctx, p.child, shard));
    case 'shift':
      return shiftAt(ctx, p.child, p.n, shard);
  }
}

/** Intersect and Difference: once the accumulator is empty it stays empty. */
function fold(ctx: ReadContext, children: BitmapPlan[], shard: number, op: Op): RO {
  let acc = bitmapAt(ctx, children[0], shard);
  for (let i = 1; i < children.length && !acc.isEmpty; i++) acc = op(acc, bitmapAt(ctx, children[i], shard));
  return acc;
}

function existence(ctx: ReadContext, shard: number): RO {
  const f = ctx.index.field(EXISTS_FIELD);
  return f === undefined ? EMPTY : (ctx.fragment(f, STANDARD_VIEW, shard)?.row(0) ?? EMPTY);
}

/** Output shard s of Shift(child, n) gathers the child's shards s−k and s−k−1 (n = k·W + r). */
function shiftAt(ctx: ReadContext, child: BitmapPlan, n: number, shard: number): RO {
  const k = Math.floor(n / SHARD_WIDTH);
  const r = n - k * SHARD_WIDTH;
  const out = new RoaringBitmap32();
  if (shard - k >= 0) {
    const a = RoaringBitmap32.addOffset(bitmapAt(ctx, child, shard - k), r);
    a.removeRange(SHARD_WIDTH, 2 ** 32);
    out.orInPlace(a);
  }
  if (r > 0 && shard - k - 1 >= 0)
    out.orInPlace(RoaringBitmap32.addOffset(bitmapAt(ctx, child, shard - k - 1), r - SHARD_WIDTH));
  return out;
}

/** Shards where the plan can have columns: the context's, moved by any Shift. Ascending. */
export function outShards(ctx: ReadContext, p: BitmapPlan): readonly number[] {
  switch (p.kind) {
    case 'row':
    case 'timeRow':
    case 'bsi':
    case 'empty':
    case 'not':
      return ctx.shards;
    case 'union':
    case 'xor':
    case 'intersect':
      return merged(ctx, p.children);
    case 'difference':
      return outShards(ctx, p.children[0]);
    case 'shift': {
      const k = Math.floor(p.n / SHARD_WIDTH);
      const carry = p.n % SHARD_WIDTH > 0;
      const out = new Set<number>();
      for (const s of outShards(ctx, p.child)) {
        if (s + k <= MAX_SHARD) out.add(s + k);
        if (carry && s + k + 1 <= MAX_SHARD) out.add(s + k + 1);
      }
      return [...out].sort((a, b) => a - b);
    }
  }
}

/** The union of the children's shards: without a Shift below, the context's (no allocation). */
function merged(ctx: ReadContext, children: readonly BitmapPlan[]): readonly number[] {
  let same = true;
  for (const c of children) if (outShards(ctx, c) !== ctx.shards) same = false;
  if (same) return ctx.shards;
  return [...new Set(children.flatMap((c) => outShards(ctx, c)))].sort((a, b) => a - b);
}

/** |plan| in one shard, without materialising the last combination step. */
export function countAt(ctx: ReadContext, p: BitmapPlan, shard: number): number {
  switch (p.kind) {
    case 'intersect':
      return lastStep(ctx, p.children, shard, AND, AND_CARD);
    case 'union':
      return lastStep(ctx, p.children, shard, OR, OR_CARD);
    case 'difference':
      return lastStep(ctx, p.children, shard, AND_NOT, AND_NOT_CARD);
    case 'xor':
      return lastStep(ctx, p.children, shard, XOR, XOR_CARD);
    case 'not':
      return existence(ctx, shard).andNotCardinality(bitmapAt(ctx, p.child, shard));
    default:
      return bitmapAt(ctx, p, shard).size;
  }
}

function lastStep(ctx: ReadContext, children: BitmapPlan[], shard: number, op: Op, card: Card): number {
  if (children.length === 0) return 0;
  // An absent row is the shared EMPTY (bitmapAt): an Intersect or Difference that starts from it,
  // or an Intersect with it, counts 0 without a native call (issue 24: a Count of rows a shard
  // does not hold made one andCardinality call a shard).
  const absorbs = op === AND || op === AND_NOT;
  let acc = bitmapAt(ctx, children[0], shard);
  if (absorbs && acc === EMPTY) return 0;
  for (let i = 1; i < children.length - 1; i++) acc = op(acc, bitmapAt(ctx, children[i], shard));
  if (children.length === 1) return acc.size;
  const last = bitmapAt(ctx, children[children.length - 1], shard);
  if (op === AND && last === EMPTY) return 0;
  return card(acc, last);
}

/**
 * Count(Intersect(Row, Row, …)) of plain rows over the context's shards, straight through (no
 * yield: the state cannot change meanwhile), each row's view and ID found once rather than once a
 * shard as countAt does (issue 24: the per-shard lookups were the most of a 16-shard Count's own
 * JavaScript). Undefined when a child is not a plain row: countAt's way then.
 */
export function countRowsIntersect(ctx: ReadContext, children: readonly BitmapPlan[]): number | undefined {
  if (children.length < 2) return undefined;
  const views = new Array<ReadonlyView>(children.length);
  const ids = new Array<number>(children.length);
  let absent = false;
  for (let i = 0; i < children.length; i++) {
    const c = children[i];
    if (c.kind !== 'row') return undefined;
    const id = resolveRow(ctx.index, c.field, c.row);
    const view = c.field.view(c.view ?? STANDARD_VIEW);
    if (id === undefined || view === undefined) absent = true;
    else {
      ids[i] = id;
      views[i] = view;
    }
  }
  // A row absent everywhere: an intersection with it is empty in every shard.
  if (absent) return 0;
  const shards = ctx.shards;
  const last = children.length - 1;
  let n = 0;
  for (let s = 0; s < shards.length; s++) {
    // As lastStep: an absent row (no native call for it), else the last step only counts.
    let acc: RO | undefined = ctx.viewFragment(views[0], shards[s])?.row(ids[0]);
    for (let i = 1; i < last && acc !== undefined; i++) {
      const r = ctx.viewFragment(views[i], shards[s])?.row(ids[i]);
      acc = r === undefined ? undefined : AND(acc, r);
    }
    if (acc === undefined) continue;
    const b = ctx.viewFragment(views[last], shards[s])?.row(ids[last]);
    if (b !== undefined) n += acc.andCardinality(b);
  }
  return n;
}

const COPY_SLICE = 65_536;

/** Each non-empty shard's offsets, copied out (a write meanwhile cannot change them). Yields between shards. */
function* columnParts(ctx: ReadContext, p: BitmapPlan): Generator<void, ShardOffsets[], undefined> {
  const parts: ShardOffsets[] = [];
  for (const s of outShards(ctx, p)) {
    const bm = bitmapAt(ctx, p, s);
    if (!bm.isEmpty) parts.push({ shard: s, offsets: bm.toUint32Array() });
    yield;
  }
  return parts;
}

/**
 * A row answer's columns: a large one (SHARD_COLUMNS_FROM) as the shards' offsets, off the JS
 * heap (shard-columns.ts), a small one (or one with columns past 2^53) as an array.
 */
export function* planRowColumns(
  ctx: ReadContext,
  p: BitmapPlan,
): Generator<void, ColumnId[] | ShardColumns, undefined> {
  const parts = yield* columnParts(ctx, p);
  let total = 0;
  for (const part of parts) total += part.offsets.length;
  const last = parts[parts.length - 1];
  if (total >= SHARD_COLUMNS_FROM && (last === undefined || last.shard <= MAX_SAFE_SHARD))
    return new ShardColumns(parts);
  return yield* columnsOf(parts, total);
}

/**
 * The parts' columns in an array made at its final length, filled COPY_SLICE at a time: an array
 * grown by push is copied whole each time it grows, and at 10M columns one such copy held the
 * event loop for hundreds of ms (issue 23's bench).
 */
function* columnsOf(parts: readonly ShardOffsets[], total: number): Generator<void, ColumnId[], undefined> {
  const cols = new Array<ColumnId>(total);
  let n = 0;
  for (const { shard, offsets } of parts) {
    if (shard > MAX_SAFE_SHARD) {
      // Columns above 2^53−1: exact as bigints (the only bigints of a row result).
      for (const o of offsets) cols[n++] = columnIdOf(shard, o);
      continue;
    }
    const base = shard * SHARD_WIDTH;
    for (let at = 0; at < offsets.length; at += COPY_SLICE) {
      const end = Math.min(offsets.length, at + COPY_SLICE);
      for (let i = at; i < end; i++) cols[n++] = base + offsets[i];
      yield;
    }
  }
  return cols;
}
