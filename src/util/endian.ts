// Typed-array views over int64 memory (BigInt64Array as 32-bit halves) assume the host's byte
// order; every such fast path checks this and keeps a portable fallback.
export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
