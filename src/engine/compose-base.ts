// Cluster backups and restores (docs/CLUSTER.md, "Backup and restore"): a node's snapshot holds
// the shards of the partitions it applied, each up to the position its CommandApplied mark names.
// A cluster restore starts from parts of several such snapshots — the global state (schema, keys,
// attributes, ingests: NAME.meta) of one, each partition's shards from another — composed into
// one state and written as the new directory's base snapshot (sequence 0), from which the topics
// are read on at the marks' positions.
import { EVENT_KINDS } from '../events/registry.js';
import { apply } from '../events/apply.js';
import { type CommandMark, Holder } from '../state/holder.js';
import type { SnapshotFiles } from './ports.js';
import { captureSnapshot, decodeSnapshot } from './snapshot-codec.js';

/** The marks a snapshot body holds: which partitions it covers, up to where, and their newest times. */
export function snapshotMarks(body: Uint8Array): CommandMark[] {
  const out: CommandMark[] = [];
  for (const e of decodeSnapshot(body, { lazy: true }))
    if (e.type === 'CommandApplied') {
      const { topic, partition, offset, position, timeMs } = e;
      out.push({ topic, partition, offset, position, maxMs: timeMs });
    }
  return out;
}

export interface ComposePart {
  body: Uint8Array;
  /** The log partitions taken from this part: their shards and their marks. */
  partitions: ReadonlySet<number>;
  partitionOf(index: string, shard: number): number;
}

/**
 * The global state of `meta` (with its NAME.meta mark), then each part's partitions. A fragment or
 * a bit depth of a field the global state does not have (deleted since) is left out.
 */
export function composeParts(meta: Uint8Array | undefined, parts: readonly ComposePart[]): Holder {
  const h = new Holder();
  if (meta !== undefined)
    // What NAME.meta carries (events/kind.ts SnapshotRole): the rest is bits and log marks.
    for (const e of decodeSnapshot(meta, { lazy: true }))
      if (EVENT_KINDS[e.type].snapshot === 'global' || (e.type === 'CommandApplied' && e.topic === 'meta')) apply(h, e);
  for (const part of parts)
    for (const e of decodeSnapshot(part.body, { lazy: true })) {
      if (e.type === 'CommandApplied') {
        if (e.topic === 'log' && part.partitions.has(e.partition)) apply(h, e);
        continue;
      }
      const field = 'field' in e ? h.index(e.index)?.field(e.field) : undefined;
      if (e.type === 'BitDepthRaised' && field !== undefined) apply(h, e);
      if (e.type === 'BitsSet' && field !== undefined && part.partitions.has(part.partitionOf(e.index, e.shard)))
        apply(h, e);
    }
  return h;
}

/** Writes `h` as the base snapshot (sequence 0) of a new, empty data directory. */
export async function writeBase(files: Pick<SnapshotFiles, 'write'>, h: Holder): Promise<void> {
  await files.write(0, captureSnapshot(h).chunks);
}
