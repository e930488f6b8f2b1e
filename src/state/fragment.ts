import { type Bitmap, type ColumnOffsets, RoaringBitmap32 } from '../roaring/bitmap.js';
import { packFrozen } from '../roaring/frozen.js';

/**
 * New rows of one bulk adoption (an import) holding at least this many bits, and this many a row
 * on average, are packed frozen (roaring/frozen.ts): resident near their serialized size instead
 * of about 1.5× it. Packing costs about 3 µs a row (a view, a free): worth it for rows of
 * hundreds of bits and more, not for many small ones, whose per-row overhead it would not remove
 * anyway. Small adoptions (streamed) stay mutable, since a write to a frozen row copies it.
 */
const PACK_MIN_BITS = 65_536;
const PACK_MIN_BITS_PER_ROW = 512;

/** Up to this many offsets, one native add/delete per offset beats a bulk call's setup. */
const PER_BIT_LIMIT = 8;
/** Up to this many, addMany; beyond it a bitmap and one union (measured: equal near 1,000). */
const BULK_LIMIT = 256;

/** A fragment's rows as a snapshot holds them: row IDs ascending, one bitmap each. */
export interface FragmentRows {
  rows: number[];
  columns: Bitmap[];
}

/**
 * One (index, field, view, shard): a RoaringBitmap32 per row holding column offsets
 * (column % 2^20). Empty rows are dropped so `rows.size` and iteration mean "rows with bits".
 * Only state/apply.ts may call the mutating methods.
 */
export class Fragment {
  private readonly held = new Map<number, Bitmap>();
  /**
   * Rows of a loaded snapshot not yet decoded (defer): a restart makes one closure per fragment
   * instead of a view per row, and the first touch of `rows` (or warmUp) decodes them.
   */
  private pending: (() => FragmentRows) | undefined;
  /**
   * Rows that are read-only views into a loaded snapshot's bytes (adopted frozen bitmaps): no
   * per-container allocations, so they take about their serialized size. A write copies such a
   * row first. Undefined while there are none, so fragments built by writes pay nothing.
   */
  private frozen: Set<number> | undefined;

  constructor(readonly shard: number) {}

  /** The rows by ID; decodes deferred snapshot rows first, so every reader sees them. */
  get rows(): Map<number, Bitmap> {
    if (this.pending !== undefined) this.load();
    return this.held;
  }

  /** Whether rows are still deferred (warm-up and tests ask; reading `rows` decodes them). */
  get deferred(): boolean {
    return this.pending !== undefined;
  }

  /** Snapshot rows adopted on first touch; on a fragment that already has rows, at once. */
  defer(load: () => FragmentRows): void {
    if (this.pending === undefined && this.held.size === 0) this.pending = load;
    else this.adoptAll(load());
  }

  /** Decodes deferred rows now. */
  load(): void {
    const load = this.pending;
    if (load === undefined) return;
    this.pending = undefined;
    this.adoptAll(load());
  }

  private adoptAll({ rows, columns }: FragmentRows): void {
    for (let i = 0; i < rows.length; i++) this.adoptBits(rows[i], columns[i]);
  }

  row(id: number): Bitmap | undefined {
    return this.rows.get(id);
  }

  has(row: number, offset: number): boolean {
    const r = this.rows.get(row);
    return r !== undefined && r.has(offset);
  }

  /** Rows ascending. */
  rowIds(): number[] {
    return [...this.rows.keys()].sort((a, b) => a - b);
  }

  /** `offsets` is copied: callers (replay) may reuse it. */
  addBits(row: number, offsets: ColumnOffsets): void {
    const r = this.writable(row);
    if (offsets instanceof Uint32Array) {
      if (r === undefined) {
        if (offsets.length > 0) this.rows.set(row, new RoaringBitmap32(offsets));
      } else if (offsets.length <= PER_BIT_LIMIT) for (let i = 0; i < offsets.length; i++) r.tryAdd(offsets[i]);
      else if (offsets.length <= BULK_LIMIT) r.addMany(offsets);
      // addMany inserts one value at a time (a memmove each in an array container); a bitmap
      // built from many offsets joins the row by container-level unions instead.
      else r.orInPlace(new RoaringBitmap32(offsets));
    } else if (r === undefined) {
      if (!offsets.isEmpty) this.rows.set(row, offsets.clone());
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
    if (offsets instanceof Uint32Array || this.rows.has(row) || offsets.isEmpty) this.addBits(row, offsets);
    else {
      if (offsets.isFrozen) (this.frozen ??= new Set()).add(row);
      else {
        // Runs where they are smaller (run-heavy imports shrink several-fold), then no spare room.
        offsets.runOptimize();
        offsets.shrinkToFit();
      }
      this.rows.set(row, offsets);
    }
  }

  /**
   * adoptBits for each row of a bulk import; when the new rows are large enough (PACK_MIN_BITS),
   * they are kept packed frozen rather than as the (mutable) bitmaps given, which are emptied.
   */
  adoptRows(rows: readonly number[], columns: readonly ColumnOffsets[]): void {
    const fresh: number[] = [];
    const bitmaps: Bitmap[] = [];
    let bits = 0;
    for (let i = 0; i < rows.length; i++) {
      const c = columns[i];
      if (c instanceof Uint32Array || c.isFrozen || c.isEmpty || this.rows.has(rows[i])) this.adoptBits(rows[i], c);
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
    for (let i = 0; i < fresh.length; i++) {
      this.adoptBits(fresh[i], packed[i]);
      // The given bitmaps are this call's (adopted): their containers go back to the allocator
      // now, for the next import to reuse, rather than whenever a GC finalizes their wrappers.
      bitmaps[i].clear();
    }
  }

  /** The row for an in-place change: a frozen row is replaced by a mutable copy first. */
  private writable(row: number): Bitmap | undefined {
    const r = this.rows.get(row);
    if (r === undefined || this.frozen === undefined || !this.frozen.delete(row)) return r;
    const copy = r.clone();
    this.rows.set(row, copy);
    return copy;
  }

  removeBits(row: number, offsets: ColumnOffsets): void {
    const r = this.writable(row);
    if (r === undefined) return;
    if (offsets instanceof Uint32Array) {
      if (offsets.length <= PER_BIT_LIMIT) for (let i = 0; i < offsets.length; i++) r.remove(offsets[i]);
      else r.andNotInPlace(new RoaringBitmap32(offsets));
    } else r.andNotInPlace(offsets);
    if (r.isEmpty) this.rows.delete(row);
  }

  /** Whether the bit was newly set. (tryAdd: the cheapest native single-bit write, ~35 ns.) */
  add(row: number, offset: number): boolean {
    let r = this.writable(row);
    if (r === undefined) {
      r = new RoaringBitmap32();
      this.rows.set(row, r);
    }
    return r.tryAdd(offset);
  }

  remove(row: number, offset: number): void {
    const r = this.writable(row);
    // isEmpty is a native call too: only worth asking when a bit actually went.
    if (r !== undefined && r.delete(offset) && r.isEmpty) this.rows.delete(row);
  }

  /** Replace a row wholesale (Store). An empty bitmap deletes the row. */
  setRow(row: number, offsets: Bitmap): void {
    this.frozen?.delete(row);
    if (offsets.isEmpty) this.rows.delete(row);
    else this.rows.set(row, offsets.clone());
  }

  clearRow(row: number): boolean {
    this.frozen?.delete(row);
    return this.rows.delete(row);
  }

  get isEmpty(): boolean {
    return this.rows.size === 0;
  }
}
