// The bitmap types every layer shares: CRoaring's RoaringBitmap32 (through the `roaring`
// package) and the column offsets a bit delta carries. They live here, at the bottom, so that
// events/ and state/ both use them without importing each other.
import roaring from 'roaring';

const { RoaringBitmap32 } = roaring;
export type Bitmap = InstanceType<typeof RoaringBitmap32>;
export { RoaringBitmap32 };

/**
 * The column offsets of one row in a bit delta: a bitmap (imports, many bits) or an ascending
 * Uint32Array (Set/Clear of a few bits, where creating and serializing a native bitmap per
 * request cost more than the whole apply).
 */
export type ColumnOffsets = Bitmap | Uint32Array;
