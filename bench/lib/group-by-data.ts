// The data of issue 15's defect 2: in one shard, every column holds one row of each field, the
// rows drawn (deterministically) from `rows` per field, so GroupBy over three such fields visits
// about columns × rows row pairs and intersects each.
import { encodeImportRoaringRequest } from '../../src/encoding/public-proto.js';
import { encodePilosaRoaring } from '../../src/roaring/pilosa-roaring.js';
import { type Bitmap, RoaringBitmap32 } from '../../src/roaring/bitmap.js';

/** An import-roaring body for shard 0 of `field`: `columns` columns, `rows` rows. */
export function groupByFieldBody(field: number, columns: number, rows: number): Uint8Array {
  const byRow = new Map<number, number[]>();
  let x = (field + 1) * 0x9e3779b1;
  for (let c = 0; c < columns; c++) {
    // xorshift32: the same data on every run, no two fields alike.
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const r = (x >>> 0) % rows;
    let list = byRow.get(r);
    if (list === undefined) byRow.set(r, (list = []));
    list.push(c);
  }
  const bitmaps = new Map<number, Bitmap>();
  for (const [r, cols] of byRow) bitmaps.set(r, new RoaringBitmap32(cols));
  return encodeImportRoaringRequest({ clear: false, views: [{ name: '', data: encodePilosaRoaring(bitmaps) }] });
}
