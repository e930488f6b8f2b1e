// How readers see a fragment's rows: a read-only map whose packed rows (frozen bytes with no
// view yet, roaring/frozen.ts) get their view when first read, and keep it. Counting, listing
// IDs and asking `has` never make a view.
import type { Bitmap } from '../roaring/bitmap.js';

/** What the map reads from its fragment (state/fragment.ts). */
export interface RowSource {
  readonly rowCount: number;
  hasRow(id: number): boolean;
  /** The row, viewed (and kept viewed) if it was packed. */
  row(id: number): Bitmap | undefined;
  /** Rows that already have a bitmap. */
  viewedRows(): IterableIterator<[number, Bitmap]>;
  /** IDs of rows with no view yet, as a copy (reading them changes the set). */
  packedIds(): number[];
  /** Every row ID, without making views. */
  rowKeys(): IterableIterator<number>;
}

export class RowMap implements Iterable<[number, Bitmap]> {
  constructor(private readonly source: RowSource) {}

  get size(): number {
    return this.source.rowCount;
  }

  has(id: number): boolean {
    return this.source.hasRow(id);
  }

  get(id: number): Bitmap | undefined {
    return this.source.row(id);
  }

  keys(): IterableIterator<number> {
    return this.source.rowKeys();
  }

  /** Every row, packed ones viewed as they are reached (a full scan leaves the fragment viewed). */
  *entries(): Generator<[number, Bitmap]> {
    yield* this.source.viewedRows();
    for (const id of this.source.packedIds()) {
      const bm = this.source.row(id);
      if (bm !== undefined) yield [id, bm];
    }
  }

  *values(): Generator<Bitmap> {
    for (const [, bm] of this.entries()) yield bm;
  }

  [Symbol.iterator](): Generator<[number, Bitmap]> {
    return this.entries();
  }
}
