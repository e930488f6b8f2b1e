// A RoaringBitmap32 from strictly ascending values in one native call: we lay out the portable
// serialization ourselves (cheap typed-array writes, one pass over the values) and let CRoaring
// deserialize it, which only copies containers. Constructing from a Uint32Array instead inserts
// value by value and costs about four times as much; this is the import hot path for sorted
// requests.
import { RoaringBitmap32, type Bitmap } from '../roaring/bitmap.js';
import { LITTLE_ENDIAN } from '../util/endian.js';

/** CRoaring's SERIAL_COOKIE_NO_RUNCONTAINER: header, then key/cardinality pairs and offsets. */
const COOKIE_NO_RUN = 12346;
/** Above this cardinality a container is a 2^16-bit bitset, at or below a sorted uint16 array. */
const ARRAY_MAX = 4096;
const BITSET_WORDS16 = 4096;

// The layout is little-endian; elsewhere (no host in practice) callers take their general path.

// Grow-only scratch, reused by every call: deserialize copies out of it.
let scratch = new Uint16Array(1 << 15);
let containerKeys = new Uint32Array(16);
/** Where each container's data starts, in 16-bit words from the start of scratch. */
let containerStarts = new Uint32Array(16);
let containerCards = new Uint32Array(16);

/**
 * values[start..end) minus `base`, or undefined when they do not ascend strictly (repeats or
 * disorder: the caller then builds the bitmap another way) or leave [base, base + 2^32).
 */
export function bitmapFromAscending(
  values: ArrayLike<number>,
  start: number,
  end: number,
  base: number,
): Bitmap | undefined {
  if (end <= start) return new RoaringBitmap32();
  const lo = values[start] - base;
  const hi = values[end - 1] - base;
  if (!LITTLE_ENDIAN || lo < 0 || hi > 0xffffffff || hi < lo) return undefined;
  // Ascending values fill at most this many containers; the header (8 + 8 per container bytes)
  // is written last, right before the data, so the data starts after room for the largest one.
  const span = (hi >>> 16) - (lo >>> 16) + 1;
  const dataStart = 4 + 4 * span; // in 16-bit words
  // Array containers take 2 bytes a value; a bitset (8 KiB) only replaces a larger array.
  reserve(dataStart + (end - start), span);
  const u16 = scratch;
  const keys = containerKeys;
  const starts = containerStarts;
  const cards = containerCards;
  let nc = 0;
  let key = -1;
  let prev = -1;
  let j = dataStart;
  for (let i = start; i < end; i++) {
    const v = values[i] - base;
    if (v <= prev) return undefined;
    prev = v;
    const k = v >>> 16;
    if (k !== key) {
      if (nc > 0) {
        cards[nc - 1] = j - starts[nc - 1];
        j = closeContainer(u16, starts[nc - 1], j);
      }
      if (nc === span) return undefined; // a value beyond values[end - 1]: not ascending
      keys[nc] = k;
      starts[nc] = j;
      nc++;
      key = k;
    }
    u16[j++] = v; // the store keeps the low 16 bits
  }
  cards[nc - 1] = j - starts[nc - 1];
  j = closeContainer(u16, starts[nc - 1], j);
  // Header: cookie, count, (key, cardinality − 1) pairs, then each container's byte offset
  // from the start of the header.
  const header = 4 + 4 * nc; // words
  const at = dataStart - header; // a multiple of 4 words, so the 32-bit view below is aligned
  const u32 = new Uint32Array(u16.buffer, at * 2, header >>> 1);
  u32[0] = COOKIE_NO_RUN;
  u32[1] = nc;
  for (let c = 0; c < nc; c++) {
    u16[at + 4 + 2 * c] = keys[c];
    u16[at + 5 + 2 * c] = cards[c] - 1;
    u32[2 + nc + c] = (starts[c] - at) * 2;
  }
  return RoaringBitmap32.deserialize(new Uint8Array(u16.buffer, at * 2, (j - at) * 2), 'portable');
}

/** Ends the container written at u16[from..to): an array, or a bitset when it holds > 4096. */
function closeContainer(u16: Uint16Array, from: number, to: number): number {
  if (to - from <= ARRAY_MAX) return to;
  const lows = u16.slice(from, to);
  u16.fill(0, from, from + BITSET_WORDS16);
  for (let i = 0; i < lows.length; i++) u16[from + (lows[i] >>> 4)] |= 1 << (lows[i] & 15);
  return from + BITSET_WORDS16;
}

function reserve(words: number, containers: number): void {
  if (words > scratch.length) scratch = new Uint16Array(Math.max(words, 2 * scratch.length));
  if (containers > containerKeys.length) {
    containerKeys = new Uint32Array(containers);
    containerStarts = new Uint32Array(containers);
    containerCards = new Uint32Array(containers);
  }
}
