// A part of the state as a snapshot body, for the cluster's takeover from snapshots
// (cluster/commands/partition-snapshot.ts): what `keep` picks of the state, in the snapshot's own
// encoding (fragments as frozen rows), whole or in pieces for a stream, and read back as events.
// The codec stays the engine's.
import type { Event } from '../events/types.js';
import type { ReadonlyHolder } from '../state/readonly.js';
import type { FragmentState } from '../state/snapshot.js';
import { SnapshotStreamDecoder, captureSnapshot, decodeSnapshot } from './snapshot-codec.js';

/** Encodes synchronously: the part of the state at exactly one moment. */
export function capturePart(holder: ReadonlyHolder, keep: (e: Event | FragmentState) => boolean): Uint8Array {
  return Buffer.concat([...captureSnapshot(holder, keep).chunks]);
}

/** Pieces of a streamed part: large enough that a socket write per piece costs nothing. */
const PIECE_BYTES = 1 << 20;
/** An encoded chunk this large goes as a piece of its own (no copy into a joined piece). */
const OWN_PIECE_BYTES = 64 * 1024;

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
    // A fragment's rows (most of the bytes) are encoded into a buffer of their own already:
    // joining them into a larger piece was a copy of the whole body (56 ms of a holder's 100 ms
    // for a 13.8 MiB partition, profiled). Only runs of small chunks are joined.
    if (c.byteLength >= OWN_PIECE_BYTES) {
      if (bytes > 0) yield held.length === 1 ? held[0] : Buffer.concat(held);
      held = [];
      bytes = 0;
      yield c;
      continue;
    }
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

/** The events of a part as its pieces arrive (a stream): decodePart without the body in one buffer. */
export async function decodePartStream(pieces: AsyncIterable<Uint8Array>): Promise<{ events: Event[]; bytes: number }> {
  const decoder = new SnapshotStreamDecoder();
  const events: Event[] = [];
  let bytes = 0;
  for await (const piece of pieces) {
    bytes += piece.byteLength;
    for (const e of decoder.push(piece)) events.push(e);
  }
  decoder.end();
  return { events, bytes };
}
