// A partition's position in the node's log metadata (positionKey), staged in the write group of
// the command it follows: the next offset to read and, after a ";", the last offsets of commands
// already applied beyond it ("120;125,131"). Those exist because the chunks of commands sent by
// concurrent transactions interleave in a partition: a command can complete (and be applied)
// while one that began earlier is still being assembled, so the position stays at that one's
// first chunk, and a restart re-reads from there without applying the later command twice.
export interface StoredPosition {
  next: bigint;
  /** Last offsets (≥ next) of commands applied already. */
  appliedAfter: readonly bigint[];
}

export function encodePosition(next: string | bigint, appliedAfter: readonly bigint[] = []): Uint8Array {
  const tail = appliedAfter.length === 0 ? '' : `;${appliedAfter.join(',')}`;
  return Buffer.from(`${next}${tail}`, 'utf8');
}

/** The whole stored position; next 0 when none was stored. */
export function decodeStoredPosition(value: Uint8Array | undefined): StoredPosition {
  if (value === undefined) return { next: 0n, appliedAfter: [] };
  const [next, after] = Buffer.from(value).toString('utf8').split(';');
  return { next: BigInt(next), appliedAfter: after === undefined || after === '' ? [] : after.split(',').map(BigInt) };
}

/** The next offset to read (where a consumer seeks). */
export function decodePosition(value: Uint8Array | undefined): bigint {
  return decodeStoredPosition(value).next;
}
