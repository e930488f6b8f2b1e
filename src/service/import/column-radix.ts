// Shuffled import pairs: CRoaring inserts unsorted values one by one (array containers shift on
// every insert), which costs several times a sort. After the counting sort by row, each row's
// offsets are sorted here in place (small segments stay in cache, unlike one sort of the whole
// request), so rows go to bitmapFromAscending.

const DIGIT_BITS = 10;
const DIGITS = 1 << DIGIT_BITS;
/** Offsets the radix path orders: two 10-bit digits, a shard's width. */
const RADIX_LIMIT = 1 << (2 * DIGIT_BITS);
/** Below this many values the native sort beats two counting passes. */
const NATIVE_SORT_MAX = 256;

const count = new Uint32Array(DIGITS + 1);
let scratch = new Uint32Array(1 << 14);

/** Sorts a[start..end) ascending in place. */
export function sortSegment(a: Uint32Array, start: number, end: number): void {
  const n = end - start;
  if (n < 2) return;
  let max = 0;
  for (let i = start; i < end; i++) if (a[i] > max) max = a[i];
  if (n <= NATIVE_SORT_MAX || max >= RADIX_LIMIT) {
    a.subarray(start, end).sort();
    return;
  }
  if (scratch.length < n) scratch = new Uint32Array(Math.max(n, 2 * scratch.length));
  const tmp = scratch;
  // Low digit: a → tmp; high digit: tmp → a. Both passes stable, so the result is sorted.
  count.fill(0);
  for (let i = start; i < end; i++) count[(a[i] & (DIGITS - 1)) + 1]++;
  for (let d = 0; d < DIGITS; d++) count[d + 1] += count[d];
  for (let i = start; i < end; i++) tmp[count[a[i] & (DIGITS - 1)]++] = a[i];
  count.fill(0);
  for (let i = 0; i < n; i++) count[(tmp[i] >>> DIGIT_BITS) + 1]++;
  for (let d = 0; d < DIGITS; d++) count[d + 1] += count[d];
  for (let i = 0; i < n; i++) a[start + count[tmp[i] >>> DIGIT_BITS]++] = tmp[i];
}
