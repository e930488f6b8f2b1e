// Takeover from snapshots (docs/CLUSTER.md, "Takeover"): a holder's snapshot of one log partition
// is the part of its state that the partition's commands made — the fragments of the partition's
// shards, the bit depths, the indexes and fields (for their incarnations) and two marks: the
// partition's (the stored position the snapshot covers and its newest command time) and NAME.meta's
// (the schema it was applied against). A new holder installs it in one commit instead of reading
// the partition's whole history from the topic, then reads on from the mark's position.
import { INSTALLED } from '../../engine/command-time.js';
import { capturePart, capturePartPieces } from '../../engine/snapshot-part.js';
import type { FragmentState } from '../../state/snapshot.js';
import type { Event, EventSink } from '../../events/types.js';
import { EXISTS_FIELD } from '../../domain/names.js';
import type { ReadonlyHolder, ReadonlyIndex } from '../../state/readonly.js';
import { commandMarkKey } from '../../state/holder.js';
import { decodeStoredPosition, type StoredPosition } from './position.js';

type PartitionOf = (index: string, shard: number) => number;
type Applied = Extract<Event, { type: 'CommandApplied' }>;

/** The holder's side: the partition's part of `h` as a snapshot body; undefined without a mark for it. */
export function capturePartition(
  h: ReadonlyHolder,
  partition: number,
  partitionOf: PartitionOf,
): Uint8Array | undefined {
  if (!h.commandMarks.has(commandMarkKey('log', partition))) return undefined;
  return capturePart(h, partitionPart(partition, partitionOf));
}

/**
 * capturePartition in pieces encoded as they are pulled (the snapshot route streams them):
 * captured at the call, so the pieces are the partition at that moment whatever is applied after.
 */
export function capturePartitionPieces(
  h: ReadonlyHolder,
  partition: number,
  partitionOf: PartitionOf,
): Iterable<Uint8Array> | undefined {
  if (!h.commandMarks.has(commandMarkKey('log', partition))) return undefined;
  return capturePartPieces(h, partitionPart(partition, partitionOf));
}

/** What of the state a partition's snapshot keeps. */
function partitionPart(partition: number, partitionOf: PartitionOf): (e: Event | FragmentState) => boolean {
  return (e) => {
    switch (e.type) {
      case 'Fragment':
        return partitionOf(e.index, e.fragment.shard) === partition;
      case 'IndexCreated':
      case 'FieldCreated':
      case 'BitDepthRaised':
        return true;
      case 'CommandApplied':
        return e.topic === 'meta' || (e.topic === 'log' && e.partition === partition);
      default:
        return false;
    }
  };
}

/** The stored position a partition's mark in `h` covers (undefined: none). */
export function markedPosition(h: ReadonlyHolder, partition: number): StoredPosition | undefined {
  const m = h.commandMarks.get(commandMarkKey('log', partition));
  return m === undefined ? undefined : decodeStoredPosition(Buffer.from(m.position, 'utf8'));
}

export interface PartitionSnapshot {
  /** The stored position it covers (the new holder's, once installed). */
  position: StoredPosition;
  /** The mark's text, as the holder stored it. */
  positionText: string;
  /** Newest command time it holds. */
  timeMs: number;
  /** NAME.meta position the holder had applied: the new holder applies meta as far first. */
  metaNext: bigint;
  events: Event[];
}

/** A snapshot's parts from its decoded events (decodePart, decodePartStream). */
export function readPartitionSnapshot(decoded: Iterable<Event>, partition: number): PartitionSnapshot {
  const events: Event[] = [];
  let log: Applied | undefined;
  let meta: Applied | undefined;
  for (const e of decoded) {
    if (e.type === 'CommandApplied') {
      if (e.topic === 'meta') meta = e;
      else if (e.topic === 'log' && e.partition === partition) log = e;
    } else events.push(e);
  }
  if (log === undefined) throw new Error(`a snapshot of partition ${partition} without its mark`);
  return {
    position: decodeStoredPosition(Buffer.from(log.position, 'utf8')),
    positionText: log.position,
    timeMs: log.timeMs,
    metaNext: meta === undefined ? 0n : decodeStoredPosition(Buffer.from(meta.position, 'utf8')).next,
    events,
  };
}

/** The CommandApplied that marks the partition installed (engine/command-time.ts, INSTALLED). */
export function installedMark(partition: number, snap: PartitionSnapshot): Applied {
  const { positionText: position, timeMs } = snap;
  return { type: 'CommandApplied', topic: 'log', partition, offset: INSTALLED, position, timeMs };
}

/**
 * The new holder's decider: what it held of the partition is cleared, then the snapshot's bits
 * of every field that is still the same incarnation here (a field deleted, or deleted and
 * created again, since the holder's snapshot keeps none of them) are set, with their bit depths.
 */
export function decideInstall(
  h: ReadonlyHolder,
  sink: EventSink,
  snap: PartitionSnapshot,
  partition: number,
  partitionOf: PartitionOf,
): void {
  for (const index of h.sortedIndexes())
    for (const field of index.fields.values())
      for (const view of field.views.values())
        for (const frag of view.fragments.values()) {
          if (frag.isEmpty || partitionOf(index.name, frag.shard) !== partition) continue;
          const rows = frag.rowIds();
          // Copies: the event must not alias the rows it clears.
          const columns = rows.map((r) => frag.peekRow(r)?.toUint32Array() ?? new Uint32Array(0));
          sink.emit({
            type: 'BitsCleared',
            index: index.name,
            field: field.name,
            view: view.name,
            shard: frag.shard,
            rows,
            columns,
          });
        }
  const theirs = new Map<string, string | undefined>();
  for (const e of snap.events) {
    if (e.type === 'IndexCreated') theirs.set(e.index, e.meta);
    else if (e.type === 'FieldCreated') theirs.set(`${e.index}/${e.field}`, e.meta);
    else if (e.type === 'BitsSet' || e.type === 'BitDepthRaised') {
      const index = h.index(e.index);
      const field = index?.field(e.field);
      if (index === undefined || field === undefined || !sameIncarnation(index, e.field, theirs)) continue;
      if (e.type === 'BitsSet') sink.emit(e);
      else if (e.bitDepth > field.bitDepth) sink.emit(e);
    }
  }
}

/** Whether the index and field here are those the snapshot's bits were written to. */
function sameIncarnation(
  index: ReadonlyIndex,
  field: string,
  theirs: ReadonlyMap<string, string | undefined>,
): boolean {
  if (theirs.get(index.name) !== index.incarnation) return false;
  if (field === EXISTS_FIELD) return true;
  return theirs.get(`${index.name}/${field}`) === index.field(field)?.incarnation;
}
