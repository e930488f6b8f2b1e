// bigint → number for IDs. Number(bigint) is a runtime call in V8 (≈12 ns, measured on Node 20),
// and every Row(f=N) of every query converts one; going through a 64-bit typed array's two
// 32-bit halves takes half that. Only for 0 ≤ v ≤ 2^53−1, where the result is exact.
import { LITTLE_ENDIAN } from '../util/endian.js';

const WIDE = new BigUint64Array(1);
const HALVES = new Uint32Array(WIDE.buffer);
const LO = LITTLE_ENDIAN ? 0 : 1;
const HI = 1 - LO;

/** `v` as a number; the caller has checked 0 ≤ v ≤ Number.MAX_SAFE_INTEGER. */
export function safeUintToNumber(v: bigint): number {
  WIDE[0] = v;
  const hi = HALVES[HI];
  // A small ID stays an integer (a Smi), not a double that a plan would have to box.
  return hi === 0 ? HALVES[LO] : hi * 2 ** 32 + HALVES[LO];
}
