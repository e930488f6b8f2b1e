import type { ReadonlyRoaringBitmap32 } from 'roaring';
import { type Bitmap, type ColumnOffsets, RoaringBitmap32 } from '../roaring/bitmap.js';
import { type FrozenRow, packFrozen } from '../roaring/frozen.js';
import type { FragmentChanges } from './changes.js';
import { RowMap } from './row-map.js';

/**
 * New rows of one bulk adoption (an import) holding at least this many bits, and this many a row
 * on average, are packed frozen (roaring/frozen.ts): resident near their serialized size instead
 * of about 1.5× it. Packing costs about 3 µs a row (a view, a free): worth it for rows of
 * hundreds of bits and more, not for many small ones, whose per-row overhead it would not remove
 * anyway. Small adoptions (streamed) stay mutable, since a write to a frozen row copies it.
 */
const PACK_MIN_BITS = 65_536;
const PACK_MIN_BITS_PER_ROW = 512;

/**
 * A row's change of one write group is published to query workers as the bits set and cleared
 * up to this many; past it, as the row's new frozen image (engine/frozen-feed.ts).
 */
export const PATCH_MAX_BITS = 256;

/** A row's change in one write group: the bits set and cleared, or its whole new image. */
export type RowChange = { set: Set<number>; cleared: Set<number> } | 'image';

/** Up to this many offsets, one native add/delete per offset beats a bulk call's setup. */
const PER_BIT_LIMIT = 8;
/** Up to this many, addMany; beyond it a bitmap and one union (measured: equal near 1,000). */
const BULK_LIMIT = 256;

/**
 * A fragment's rows as a snapshot holds them: row IDs ascending, and a bitmap each, or frozen
 * bytes each (a loaded snapshot's rows, viewed when first read).
 */
export type FragmentRows = { rows: number[]; columns: Bitmap[] } | { rows: number[]; frozen: FrozenRow[] };

/**
 * One (index, field, view, shard): a RoaringBitmap32 per row holding column offsets
 * (column % 2^20). Empty rows are dropped so `rows.size` and iteration mean "rows with bits".
 * Only apply() (the entries of events/kinds/) may call the mutating methods.
 */
export class Fragment {
  private readonly held = new Map<number, Bitmap>();
  /**
   * Rows kept as frozen bytes with no view yet (an import's packed rows, a loaded snapshot's):
   * a view's native structs take ~0.6 KB a row, more than a sparse row's bytes, so it is made
   * on first read (row(), `rows`) and kept from then on. Counts, IDs, bit counts, footprints,
   * snapshots (captureRow) and whole-state scans (peekRow) use the bytes without keeping a view.
   * Undefined while there are none.
   */
  private packed: Map<number, FrozenRow> | undefined;
  /**
   * Rows of a loaded snapshot not yet adopted (defer): a restart makes one closure per fragment
   * instead of an entry per row, and the first touch (or warmUp) adopts them.
   */
  private pending: (() => FragmentRows) | undefined;
  /**
   * Rows that are read-only views over frozen bytes (held rows that were packed, or adopted
   * frozen bitmaps): a write copies such a row first. Undefined while there are none.
   */
  private frozen: Set<number> | undefined;
  private readonly map = new RowMap(this);
  /**
   * Bit counts of rows viewed from packed bytes, with the view they belong to: a view is never
   * changed in place (a write copies it), so the count holds while the row is that view. Work
   * estimates read row sizes every query, and a native size call per row and shard cost more
   * than this lookup. Undefined while no packed row was viewed.
   */
  private viewSizes: Map<number, { view: Bitmap; size: number }> | undefined;
  /**
   * Rows changed since the last takeDirty() ('all': every row), while the tracker is on: each
   * with its change, the bits set and cleared (a patch) or 'image' (too many to list).
   */
  private dirty: Map<number, RowChange> | 'all' | undefined;
  /** Bumped by every change of the rows (derived per-fragment data, such as TopN's ranking, keys on it). */
  private changes = 0;

  constructor(
    readonly shard: number,
    private readonly tracker?: FragmentChanges,
  ) {}

  /** Notes a changed row (its whole image) for the query workers' publication (state/changes.ts). */
  private touch(row: number | 'all'): void {
    const c = this.tracker;
    if (c === undefined || !c.enabled) return;
    if (row === 'all') this.dirty = 'all';
    else if (this.dirty === undefined) this.dirty = new Map([[row, 'image']]);
    else if (this.dirty !== 'all') this.dirty.set(row, 'image');
    c.fragments.add(this);
  }

  /**
   * Notes bits set (`set`) or cleared in a row: a patch the workers apply to their copy, so a
   * point write does not re-freeze and re-send the whole row (engine/frozen-feed.ts).
   */
  private touchBits(row: number, offsets: ArrayLike<number>, set: boolean): void {
    const c = this.tracker;
    if (c === undefined || !c.enabled) return;
    c.fragments.add(this);
    if (this.dirty === 'all') return;
    this.dirty ??= new Map();
    let change = this.dirty.get(row);
    if (change === 'image') return;
    if (change === undefined) {
      change = { set: new Set(), cleared: new Set() };
      this.dirty.set(row, change);
    }
    if (change.set.size + change.cleared.size + offsets.length > PATCH_MAX_BITS) {
      this.dirty.set(row, 'image');
      return;
    }
    const [add, drop] = set ? [change.set, change.cleared] : [change.cleared, change.set];
    for (let i = 0; i < offsets.length; i++) {
      add.add(offsets[i]);
      drop.delete(offsets[i]);
    }
  }

  /** Rows changed since the last call with their changes ('all': any may have), and forgets them. */
  takeDirty(): Map<number, RowChange> | 'all' {
    const d = this.dirty;
    this.dirty = undefined;
    return d ?? new Map();
  }

  /** A packed row's frozen bytes (no view made), if the row is held packed. */
  packedRow(id: number): FrozenRow | undefined {
    this.load();
    return this.packed?.get(id);
  }

  /**
   * Holds a row as the given frozen bytes of the same bits instead of its bitmap (the query
   * workers' publication froze it into shared memory: one copy serves every thread).
   */
  repack(row: number, frozen: FrozenRow): void {
    this.load();
    this.held.delete(row);
    this.viewSizes?.delete(row);
    this.frozen?.delete(row);
    (this.packed ??= new Map()).set(row, frozen);
  }

  /**
   * Holds a row as the given frozen bytes from now on, whatever it held (a query worker's
   * mirror: a publication's new image of the row).
   */
  replaceFrozen(row: number, frozen: FrozenRow): void {
    this.repack(row, frozen);
    this.changes++;
  }

  /** Changes so far: equal versions mean equal rows. */
  get version(): number {
    return this.changes;
  }

  /** The rows by ID, read-only; packed rows are viewed as they are read. */
  get rows(): RowMap {
    return this.map;
  }

  /** Whether rows are still deferred (warm-up and tests ask; reading `rows` adopts them). */
  get deferred(): boolean {
    return this.pending !== undefined;
  }

  /** Snapshot rows adopted on first touch; on a fragment that already has rows, at once. */
  defer(load: () => FragmentRows): void {
    this.touch('all');
    if (this.pending === undefined && this.rowCount === 0) this.pending = load;
    else this.adoptAll(load());
  }

  /** Adopts deferred rows now. */
  load(): void {
    const load = this.pending;
    if (load === undefined) return;
    this.pending = undefined;
    this.adoptAll(load());
  }

  private adoptAll(given: FragmentRows): void {
    this.changes++;
    const { rows } = given;
    if ('columns' in given) for (let i = 0; i < rows.length; i++) this.adoptBits(rows[i], given.columns[i]);
    else
      for (let i = 0; i < rows.length; i++) {
        if (this.hasRow(rows[i])) this.adoptBits(rows[i], given.frozen[i].view());
        else (this.packed ??= new Map()).set(rows[i], given.frozen[i]);
      }
  }

  get rowCount(): number {
    this.load();
    return this.held.size + (this.packed?.size ?? 0);
  }

  /** Rows held as frozen bytes with no view yet (tests and the scale bench ask). */
  get packedCount(): number {
    this.load();
    return this.packed?.size ?? 0;
  }

  hasRow(id: number): boolean {
    this.load();
    return this.held.has(id) || this.packed?.has(id) === true;
  }

  /** The row; a packed row gets its view now and keeps it. */
  row(id: number): Bitmap | undefined {
    this.load();
    const r = this.held.get(id);
    if (r !== undefined || this.packed === undefined) return r;
    const p = this.packed.get(id);
    if (p === undefined) return undefined;
    this.packed.delete(id);
    const view = p.view();
    this.held.set(id, view);
    (this.frozen ??= new Set()).add(id);
    (this.viewSizes ??= new Map()).set(id, { view, size: p.size });
    return view;
  }

  /** The row without keeping a view of a packed one (scans over everything: export, digests). */
  peekRow(id: number): Bitmap | undefined {
    this.load();
    return this.held.get(id) ?? this.packed?.get(id)?.view();
  }

  /** The row's bit count (0: no such row), with no view made to keep. */
  rowSize(id: number): number {
    this.load();
    const held = this.held.get(id);
    if (held === undefined) return this.packed?.get(id)?.size ?? 0;
    const known = this.viewSizes?.get(id);
    if (known === undefined) return held.size;
    if (known.view === held) return known.size;
    this.viewSizes?.delete(id);
    return held.size;
  }

  /**
   * |row ∩ other| with no view kept: a packed row is viewed for this count only (its view goes
   * with the call), so counting candidates (TopN) leaves the fragment as it was.
   */
  countWith(id: number, other: ReadonlyRoaringBitmap32): number {
    this.load();
    const r = this.held.get(id) ?? this.packed?.get(id)?.view();
    return r === undefined ? 0 : r.andCardinality(other);
  }

  /** [row, bit count] for every row, with no views made to keep. */
  *rowSizes(): Generator<[number, number]> {
    for (const [id, bm] of this.viewedRows()) yield [id, bm.size];
    if (this.packed !== undefined) for (const [id, p] of this.packed) yield [id, p.size];
  }

  /**
   * Bits and serialized bytes of every row, with no views made (/metrics): a packed row counts
   * its frozen bytes, a viewed one its portable run-optimized size.
   */
  footprint(): { bits: number; bytes: number } {
    let bits = 0;
    let bytes = 0;
    for (const [, bm] of this.viewedRows()) {
      bits += bm.size;
      bytes += bm.getSerializationSizeInBytes(true);
    }
    if (this.packed !== undefined)
      for (const p of this.packed.values()) {
        bits += p.size;
        bytes += p.len;
      }
    return { bits, bytes };
  }

  /**
   * A row as a snapshot captures it: a packed row's frozen bytes, or the row's bitmap (frozen
   * ones are never changed in place, so the caller may keep it as it is).
   */
  captureRow(id: number): Bitmap | Uint8Array | undefined {
    this.load();
    return this.held.get(id) ?? this.packed?.get(id)?.bytes();
  }

  viewedRows(): IterableIterator<[number, Bitmap]> {
    this.load();
    return this.held.entries();
  }

  packedIds(): number[] {
    this.load();
    return this.packed === undefined ? [] : [...this.packed.keys()];
  }

  *rowKeys(): Generator<number> {
    this.load();
    yield* this.held.keys();
    if (this.packed !== undefined) yield* this.packed.keys();
  }

  has(row: number, offset: number): boolean {
    const r = this.row(row);
    return r !== undefined && r.has(offset);
  }

  /** Rows ascending. */
  rowIds(): number[] {
    return [...this.rowKeys()].sort((a, b) => a - b);
  }

  /** `offsets` is copied: callers (replay) may reuse it. */
  addBits(row: number, offsets: ColumnOffsets): void {
    if (offsets instanceof Uint32Array && offsets.length <= PATCH_MAX_BITS) this.touchBits(row, offsets, true);
    else this.touch(row);
    this.changes++;
    const r = this.writable(row);
    if (offsets instanceof Uint32Array) {
      if (r === undefined) {
        if (offsets.length > 0) this.held.set(row, new RoaringBitmap32(offsets));
      } else if (offsets.length <= PER_BIT_LIMIT) for (let i = 0; i < offsets.length; i++) r.tryAdd(offsets[i]);
      else if (offsets.length <= BULK_LIMIT) r.addMany(offsets);
      // addMany inserts one value at a time (a memmove each in an array container); a bitmap
      // built from many offsets joins the row by container-level unions instead.
      else r.orInPlace(new RoaringBitmap32(offsets));
    } else if (r === undefined) {
      if (!offsets.isEmpty) this.held.set(row, offsets.clone());
    } else {
      // A union grows containers with spare capacity; bulk adds are where it piles up.
      r.orInPlace(offsets);
      r.shrinkToFit();
    }
  }

  /**
   * Like addBits, but a bitmap for a new row becomes the row itself (compacted): the caller
   * gives it up. Saves the copy, and the freed original that would leave a hole in the heap.
   */
  adoptBits(row: number, offsets: ColumnOffsets): void {
    this.touch(row);
    this.changes++;
    if (offsets instanceof Uint32Array || this.hasRow(row) || offsets.isEmpty) this.addBits(row, offsets);
    else {
      this.viewSizes?.delete(row);
      if (offsets.isFrozen) (this.frozen ??= new Set()).add(row);
      else {
        // Runs where they are smaller (run-heavy imports shrink several-fold), then no spare room.
        offsets.runOptimize();
        offsets.shrinkToFit();
      }
      this.held.set(row, offsets);
    }
  }

  /**
   * adoptBits for each row of a bulk import; when the new rows are large enough (PACK_MIN_BITS),
   * they are kept packed frozen rather than as the (mutable) bitmaps given, which are emptied.
   */
  adoptRows(rows: readonly number[], columns: readonly ColumnOffsets[]): void {
    this.changes++;
    const fresh: number[] = [];
    const bitmaps: Bitmap[] = [];
    let bits = 0;
    for (let i = 0; i < rows.length; i++) {
      const c = columns[i];
      if (c instanceof Uint32Array || c.isFrozen || c.isEmpty || this.hasRow(rows[i])) this.adoptBits(rows[i], c);
      else {
        fresh.push(rows[i]);
        bitmaps.push(c);
        bits += c.size;
      }
    }
    if (bits < PACK_MIN_BITS || bits < PACK_MIN_BITS_PER_ROW * fresh.length) {
      for (let i = 0; i < fresh.length; i++) this.adoptBits(fresh[i], bitmaps[i]);
      return;
    }
    const packed = packFrozen(bitmaps);
    this.packed ??= new Map();
    for (let i = 0; i < fresh.length; i++) {
      this.touch(fresh[i]);
      this.packed.set(fresh[i], packed[i]);
      // The given bitmaps are this call's (adopted): their containers go back to the allocator
      // now, for the next import to reuse, rather than whenever a GC finalizes their wrappers.
      bitmaps[i].clear();
    }
  }

  /**
   * The row for an in-place change: a frozen or packed row is replaced by a mutable copy first
   * (a packed one through a view that is not kept).
   */
  private writable(row: number): Bitmap | undefined {
    this.load();
    // The row is about to change (a copy, if frozen): a viewed size no longer holds.
    this.viewSizes?.delete(row);
    const packed = this.packed?.get(row);
    if (packed !== undefined) {
      this.packed?.delete(row);
      const copy = packed.view().clone();
      this.held.set(row, copy);
      return copy;
    }
    const r = this.held.get(row);
    if (r === undefined || this.frozen === undefined || !this.frozen.delete(row)) return r;
    const copy = r.clone();
    this.held.set(row, copy);
    return copy;
  }

  removeBits(row: number, offsets: ColumnOffsets): void {
    if (offsets instanceof Uint32Array && offsets.length <= PATCH_MAX_BITS) this.touchBits(row, offsets, false);
    else this.touch(row);
    this.changes++;
    const r = this.writable(row);
    if (r === undefined) return;
    if (offsets instanceof Uint32Array) {
      if (offsets.length <= PER_BIT_LIMIT) for (let i = 0; i < offsets.length; i++) r.remove(offsets[i]);
      else r.andNotInPlace(new RoaringBitmap32(offsets));
    } else r.andNotInPlace(offsets);
    if (r.isEmpty) this.held.delete(row);
  }

  /** Whether the bit was newly set. (tryAdd: the cheapest native single-bit write, ~35 ns.) */
  add(row: number, offset: number): boolean {
    if (this.tracker?.enabled === true) this.touchBits(row, [offset], true);
    this.changes++;
    let r = this.writable(row);
    if (r === undefined) {
      r = new RoaringBitmap32();
      this.held.set(row, r);
    }
    return r.tryAdd(offset);
  }

  remove(row: number, offset: number): void {
    if (this.tracker?.enabled === true) this.touchBits(row, [offset], false);
    this.changes++;
    const r = this.writable(row);
    // isEmpty is a native call too: only worth asking when a bit actually went.
    if (r !== undefined && r.delete(offset) && r.isEmpty) this.held.delete(row);
  }

  /** Replace a row wholesale (Store). An empty bitmap deletes the row. */
  setRow(row: number, offsets: Bitmap): void {
    this.changes++;
    this.load();
    this.touch(row);
    this.frozen?.delete(row);
    this.packed?.delete(row);
    this.viewSizes?.delete(row);
    if (offsets.isEmpty) this.held.delete(row);
    else this.held.set(row, offsets.clone());
  }

  clearRow(row: number): boolean {
    this.changes++;
    this.load();
    this.touch(row);
    this.frozen?.delete(row);
    this.viewSizes?.delete(row);
    const packed = this.packed?.delete(row) === true;
    return this.held.delete(row) || packed;
  }

  get isEmpty(): boolean {
    return this.rowCount === 0;
  }
}
