import { FragmentChanges } from './changes.js';
import type { Index } from './index-state.js';

/**
 * A Kafka-fed ingest (src/kafka owns the meaning of `spec`): kept in state, not in log meta, so
 * definitions and consumed offsets survive snapshots, restores and replicas.
 */
export interface IngestState {
  spec: string;
  paused: boolean;
  /** topic → partition → next offset to consume (decimal). */
  offsets: Map<string, Map<number, string>>;
  /** Records imported and records dead-lettered, counted exactly once. */
  records: number;
  deadLettered: number;
}

/**
 * Cluster mode: where this node stands in one partition of a cluster topic (the last
 * CommandApplied). `maxMs` is the newest coordinator time of any command applied from it, so a
 * state whose marks all have maxMs ≤ T holds no command stamped after T.
 */
export interface CommandMark {
  topic: string;
  partition: number;
  /** Offset of the last message of the last command applied. */
  offset: string;
  /** Stored position to resume from (cluster/commands/position.ts). */
  position: string;
  maxMs: number;
}

/** The whole in-memory state: indexes by name, plus the sequence of the last applied event. */
export class Holder {
  readonly indexes = new Map<string, Index>();
  readonly ingests = new Map<string, IngestState>();
  /** Cluster mode: by "topic/partition" (commandMarkKey). */
  readonly commandMarks = new Map<string, CommandMark>();
  /** Sequence number of the last event applied (0 = empty log). */
  appliedSeq = 0;
  /** What changed since the query workers' last publication (off without them). */
  readonly changes = new FragmentChanges();

  index(name: string): Index | undefined {
    return this.indexes.get(name);
  }

  sortedIndexes(): Index[] {
    return [...this.indexes.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}

export const commandMarkKey = (topic: string, partition: number): string => `${topic}/${partition}`;
