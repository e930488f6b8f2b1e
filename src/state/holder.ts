import type { Index } from './index-state.js';

/** The whole in-memory state: indexes by name, plus the sequence of the last applied event. */
export class Holder {
  readonly indexes = new Map<string, Index>();
  /** Sequence number of the last event applied (0 = empty log). */
  appliedSeq = 0;

  index(name: string): Index | undefined {
    return this.indexes.get(name);
  }

  sortedIndexes(): Index[] {
    return [...this.indexes.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
