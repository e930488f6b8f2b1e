// Shard → partition of NAME.log, as Pilosa maps shards to partitions: FNV-1a 64 over the UTF-8
// index name followed by the shard as 8 bytes big-endian, modulo P. Called for every shard of
// every query, so it hashes in two 32-bit halves (no BigInt) and keeps the index name's bytes.

const OFFSET_HI = 0xcbf29ce4;
const OFFSET_LO = 0x84222325;
const TWO_32 = 0x1_0000_0000;
const encoder = new TextEncoder();
const nameBytes = new Map<string, Uint8Array>();
const NAME_CACHE_MAX = 4096;

/** One FNV-1a 64 state: [hi, lo] unsigned 32-bit halves. */
type State = [number, number];

function step(s: State, byte: number): void {
  const lo = (s[1] ^ byte) >>> 0;
  // × 0x100000001b3 = × 0x1b3 + (× 2^40): lo·0x1b3 < 2^41 is exact in a double.
  const p = lo * 0x1b3;
  s[1] = p >>> 0;
  s[0] = (Math.imul(s[0], 0x1b3) + Math.floor(p / TWO_32) + (lo << 8)) >>> 0;
}

/** FNV-1a 64 of `bytes` as [hi, lo] (exported for the fixed test vectors). */
export function fnv1a64(bytes: Uint8Array, s: State = [OFFSET_HI, OFFSET_LO]): State {
  for (const b of bytes) step(s, b);
  return s;
}

function indexBytes(index: string): Uint8Array {
  let b = nameBytes.get(index);
  if (b === undefined) {
    if (nameBytes.size >= NAME_CACHE_MAX) nameBytes.clear();
    b = encoder.encode(index);
    nameBytes.set(index, b);
  }
  return b;
}

/** The partition (0…partitions-1) holding shard `shard` of `index`. */
export function partitionOf(index: string, shard: number, partitions: number): number {
  const s = fnv1a64(indexBytes(index));
  // The shard as a big-endian uint64: shards stay below 2^53, so the high word is exact.
  const hi = Math.floor(shard / TWO_32);
  const lo = shard >>> 0;
  for (let i = 24; i >= 0; i -= 8) step(s, (hi >>> i) & 0xff);
  for (let i = 24; i >= 0; i -= 8) step(s, (lo >>> i) & 0xff);
  // (hi·2^32 + lo) mod P, with every product below 2^53 for P < 2^21.
  return ((s[0] % partitions) * (TWO_32 % partitions) + (s[1] % partitions)) % partitions;
}
