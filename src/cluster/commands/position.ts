// A partition's position in the node's log metadata (positionKey), staged in the write group of
// the command it follows: the next offset to read and the last offsets of commands already
// applied beyond it. Those exist because the chunks of commands sent by concurrent transactions
// interleave in a partition: a command can complete (and be applied) while one that began
// earlier is still being assembled, so the position stays at that one's first chunk, and a
// restart re-reads from there without applying the later command twice. Stored as a consumer
// position record (storage/consumer-position.ts); CommandApplied events and backups carry it as
// text, "next;after,…" ("120;125,131").
import { type ClusterPosition, decodeConsumerPosition, encodeConsumerPosition } from '../../storage/index.js';

export type StoredPosition = Omit<ClusterPosition, 'kind'>;

export function encodePosition(next: string | bigint, appliedAfter: readonly bigint[] = []): Uint8Array {
  return encodeConsumerPosition({ kind: 'cluster', next: BigInt(next), appliedAfter });
}

/** The text form CommandApplied events carry ("next;after,…"). */
export function positionText(p: StoredPosition): string {
  const tail = p.appliedAfter.length === 0 ? '' : `;${p.appliedAfter.join(',')}`;
  return `${p.next}${tail}`;
}

/** A position from its text form, as a stored value (restores write marks' positions back). */
export function positionFromText(text: string): Uint8Array {
  const p = decodeConsumerPosition('position', 'cluster', Buffer.from(text, 'utf8'));
  return encodePosition(p.next, p.appliedAfter);
}

/** The whole stored position (`key` names it in errors); next 0 when none was stored. */
export function decodeStoredPosition(value: Uint8Array | undefined, key = 'cluster position'): StoredPosition {
  if (value === undefined) return { next: 0n, appliedAfter: [] };
  const { next, appliedAfter } = decodeConsumerPosition(key, 'cluster', value);
  return { next, appliedAfter };
}

/** The next offset to read (where a consumer seeks). */
export function decodePosition(value: Uint8Array | undefined, key?: string): bigint {
  return decodeStoredPosition(value, key).next;
}
