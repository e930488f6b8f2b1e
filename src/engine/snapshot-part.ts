// A part of the state as a snapshot body, for the cluster's takeover from snapshots
// (cluster/commands/partition-snapshot.ts): what `keep` picks of the state, in the snapshot's own
// encoding (fragments as frozen rows), whole or in pieces for a stream, and read back as events.
// The codec stays the engine's.
import type { Event } from '../events/types.js';
import type { ReadonlyHolder } from '../state/readonly.js';
import type { FragmentState } from '../state/snapshot.js';
import { captureSnapshot, decodeSnapshot } from './snapshot-codec.js';

/** Encodes synchronously: the part of the state at exactly one moment. */
export function capturePart(holder: ReadonlyHolder, keep: (e: Event | FragmentState) => boolean): Uint8Array {
  return Buffer.concat([...captureSnapshot(holder, keep).chunks]);
}

/** Pieces of a streamed part: large enough that a socket write per piece costs nothing. */
const PIECE_BYTES = 1 << 20;

/**
 * The same body in pieces of about PIECE_BYTES, encoded as they are pulled (a stream's reads):
 * captured at the call (the part of the state at exactly one moment, as capturePart), so the
 * whole body is never in memory at once on the sending side.
 */
export function capturePartPieces(
  holder: ReadonlyHolder,
  keep: (e: Event | FragmentState) => boolean,
): Generator<Uint8Array> {
  return pieces(captureSnapshot(holder, keep).chunks);
}

function* pieces(chunks: Iterable<Uint8Array>): Generator<Uint8Array> {
  let held: Uint8Array[] = [];
  let bytes = 0;
  for (const c of chunks) {
    held.push(c);
    bytes += c.byteLength;
    if (bytes < PIECE_BYTES) continue;
    yield Buffer.concat(held);
    held = [];
    bytes = 0;
  }
  if (bytes > 0) yield Buffer.concat(held);
}

/** The events of a part (fragments as BitsSet over frozen views into `body`). */
export function decodePart(body: Uint8Array): Generator<Event> {
  return decodeSnapshot(body);
}
