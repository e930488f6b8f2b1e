// A partition's position in the node's log metadata (positionKey): the next offset to read, as
// decimal text, staged in the write group of the command it follows.
export function encodePosition(next: bigint): Uint8Array {
  return Buffer.from(next.toString(), 'utf8');
}

export function decodePosition(value: Uint8Array | undefined): bigint {
  return value === undefined ? 0n : BigInt(Buffer.from(value).toString('utf8'));
}
