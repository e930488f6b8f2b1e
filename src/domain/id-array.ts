// Decoded ID lists. The protobuf decoder hands out a Uint32Array while every ID fits in 32 bits
// (half the memory of a Float64Array, and the element type alone proves each ID an unsigned
// integer, so validation can skip it); a Float64Array holds larger IDs (up to 2^53−1) and the
// lists from JSON and Kafka, which are checked item by item.
export type IdArray = Uint32Array | Float64Array;

/**
 * Column IDs as decoded from an import: a BigUint64Array only when some ID is above 2^53−1
 * (uint64 IDs from protobuf or JSON); the common lists stay IdArrays and cost nothing more.
 */
export type WideIdArray = IdArray | BigUint64Array;

/**
 * Column IDs relative to `baseShard`: ids[i] − baseShard·2^20, exact numbers. The import works
 * in that relative space and adds baseShard to each shard it writes, so fragments keep 32-bit
 * offsets and only the shard number is wide. An IdArray comes back as it is (base 0); a wide
 * list is rebased on its lowest shard, and must then span less than 2^53 columns.
 */
export function rebaseColumns(ids: WideIdArray, fail: (msg: string) => never): { ids: IdArray; baseShard: number } {
  if (!(ids instanceof BigUint64Array)) return { ids, baseShard: 0 };
  let min = ids.length > 0 ? ids[0] : 0n;
  let max = min;
  for (const v of ids) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const baseShard = Number(min >> 20n);
  const base = BigInt(baseShard) << 20n;
  if (max - base > BigInt(Number.MAX_SAFE_INTEGER))
    fail(`column IDs from ${min} to ${max} span more than 2^53-1 columns in one import: split it by shard`);
  const out = new Float64Array(ids.length);
  for (let i = 0; i < ids.length; i++) out[i] = Number(ids[i] - base);
  return { ids: out, baseShard };
}
