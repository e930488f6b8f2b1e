// Where a cluster restore starts (docs/CLUSTER.md, "Backup and restore"): from a backup's node
// snapshots, each partition of the topics from the snapshot that covers it furthest — among those
// that hold nothing stamped after the target time — or, with none, from the topic's start.
import { type ComposePart, composeParts } from '../../engine/compose-base.js';
import type { Holder } from '../../state/holder.js';
import type { CommandMark } from '../../state/holder.js';
import { decodeStoredPosition } from '../commands/position.js';
import { type ClusterTopic, positionKey } from '../types.js';

/** A node snapshot of a backup, with the marks it holds (engine/compose-base.ts, snapshotMarks). */
export interface BackupSnapshot {
  /** For messages: the node and sequence it came from. */
  describe: string;
  body: Uint8Array;
  marks: readonly CommandMark[];
}

export interface RestorePlan {
  /** The composed base state (undefined: start from nothing). */
  base: Holder | undefined;
  /** Where each partition is read on from (stored position text; absent: the topic's start). */
  positions: Map<string, string>;
  /** For the operator: which snapshot each partition starts from. */
  sources: string[];
}

const nextOf = (position: string): bigint => decodeStoredPosition(Buffer.from(position, 'utf8')).next;

/**
 * The base for a restore to `until` (undefined: the newest point): a snapshot may serve only if
 * every partition it holds stands at or before `until` (its marks' newest times), as a time-travel
 * read's base (engine/command-time.ts).
 */
export function planRestore(
  snapshots: readonly BackupSnapshot[],
  until: number | undefined,
  partitions: number,
  partitionOf: (index: string, shard: number) => number,
): RestorePlan {
  const usable = snapshots.filter((s) => until === undefined || s.marks.every((m) => m.maxMs <= until));
  const best = (topic: ClusterTopic, p: number): { s: BackupSnapshot; mark: CommandMark } | undefined => {
    let found: { s: BackupSnapshot; mark: CommandMark } | undefined;
    for (const s of usable)
      for (const mark of s.marks)
        if (mark.topic === topic && mark.partition === p)
          if (found === undefined || nextOf(mark.position) > nextOf(found.mark.position)) found = { s, mark };
    return found;
  };
  const positions = new Map<string, string>();
  const sources: string[] = [];
  const meta = best('meta', 0);
  if (meta !== undefined) {
    positions.set(positionKey('meta', 0), meta.mark.position);
    sources.push(`meta from ${meta.s.describe} at ${meta.mark.position}`);
  }
  const byPart = new Map<BackupSnapshot, Set<number>>();
  for (let p = 0; p < partitions; p++) {
    const b = best('log', p);
    if (b === undefined) continue;
    positions.set(positionKey('log', p), b.mark.position);
    const set = byPart.get(b.s) ?? new Set<number>();
    set.add(p);
    byPart.set(b.s, set);
  }
  for (const [s, ps] of byPart) sources.push(`partitions ${[...ps].join(',')} from ${s.describe}`);
  const parts: ComposePart[] = [...byPart].map(([s, ps]) => ({ body: s.body, partitions: ps, partitionOf }));
  const base = meta === undefined && parts.length === 0 ? undefined : composeParts(meta?.s.body, parts);
  return { base, positions, sources };
}
