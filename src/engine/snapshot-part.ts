// A part of the state as a snapshot body, for the cluster's takeover from snapshots
// (cluster/commands/partition-snapshot.ts): what `keep` picks of the state, in the snapshot's own
// encoding (fragments as frozen rows), and read back as events. The codec stays the engine's.
import type { Event } from '../events/types.js';
import type { ReadonlyHolder } from '../state/readonly.js';
import type { FragmentState } from '../state/snapshot.js';
import { captureSnapshot, decodeSnapshot } from './snapshot-codec.js';

/** Encodes synchronously: the part of the state at exactly one moment. */
export function capturePart(holder: ReadonlyHolder, keep: (e: Event | FragmentState) => boolean): Uint8Array {
  return Buffer.concat([...captureSnapshot(holder, keep).chunks]);
}

/** The events of a part (fragments as BitsSet over frozen views into `body`). */
export function decodePart(body: Uint8Array): Generator<Event> {
  return decodeSnapshot(body);
}
