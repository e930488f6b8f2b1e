import roaring from 'roaring';

const { RoaringBitmap32 } = roaring;
export type Bitmap = InstanceType<typeof RoaringBitmap32>;
export { RoaringBitmap32 };

/**
 * One (index, field, view, shard): a RoaringBitmap32 per row holding column offsets
 * (column % 2^20). Empty rows are dropped so `rows.size` and iteration mean "rows with bits".
 * Only state/apply.ts may call the mutating methods.
 */
export class Fragment {
  readonly rows = new Map<number, Bitmap>();

  constructor(readonly shard: number) {}

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

  addBits(row: number, offsets: Bitmap): void {
    const r = this.rows.get(row);
    if (r === undefined) {
      if (!offsets.isEmpty) this.rows.set(row, offsets.clone());
    } else r.orInPlace(offsets);
  }

  removeBits(row: number, offsets: Bitmap): void {
    const r = this.rows.get(row);
    if (r === undefined) return;
    r.andNotInPlace(offsets);
    if (r.isEmpty) this.rows.delete(row);
  }

  add(row: number, offset: number): void {
    let r = this.rows.get(row);
    if (r === undefined) {
      r = new RoaringBitmap32();
      this.rows.set(row, r);
    }
    r.add(offset);
  }

  remove(row: number, offset: number): void {
    const r = this.rows.get(row);
    if (r === undefined) return;
    r.delete(offset);
    if (r.isEmpty) this.rows.delete(row);
  }

  /** Replace a row wholesale (Store). An empty bitmap deletes the row. */
  setRow(row: number, offsets: Bitmap): void {
    if (offsets.isEmpty) this.rows.delete(row);
    else this.rows.set(row, offsets.clone());
  }

  clearRow(row: number): boolean {
    return this.rows.delete(row);
  }

  get isEmpty(): boolean {
    return this.rows.size === 0;
  }
}
