// Past states for time-travel reads: a separate Holder per point, materialized from the newest
// retained snapshot at or before it plus a replay through the same bootstrap/apply path as a
// server start. The live holder is never touched. A small LRU, bounded by the states' encoded
// size, keeps recent points so a repeated query at the same point costs only the query.
import type { Logger } from 'pino';
import type { Holder } from '../state/holder.js';
import { bootstrap } from './bootstrap.js';
import type { LogStore, SnapshotFiles } from './ports.js';
import { encodeSnapshot } from './snapshot-codec.js';

interface Entry {
  holder: Promise<Holder>;
  bytes: number;
}

export class PastStates {
  // Map iteration order is insertion order: re-inserting on use makes the first key the LRU.
  private readonly entries = new Map<number, Entry>();
  private bytes = 0;
  readonly stats = { hits: 0, misses: 0 };

  constructor(
    private readonly log: LogStore,
    private readonly snapshots: SnapshotFiles,
    private readonly logger: Logger,
    private readonly maxBytes = 256 * 1024 * 1024,
  ) {}

  /** The state as of `seq` (the caller checked it is inside the history and durable). */
  async at(seq: number): Promise<Holder> {
    const hit = this.entries.get(seq);
    if (hit !== undefined) {
      this.stats.hits++;
      this.entries.delete(seq);
      this.entries.set(seq, hit);
      return hit.holder;
    }
    this.stats.misses++;
    const entry: Entry = { holder: this.materialize(seq), bytes: 0 };
    this.entries.set(seq, entry);
    try {
      const holder = await entry.holder;
      entry.bytes = encodeSnapshot(holder).bytes;
      this.bytes += entry.bytes;
      this.evict(seq);
      return holder;
    } catch (err) {
      this.entries.delete(seq);
      throw err;
    }
  }

  private async materialize(seq: number): Promise<Holder> {
    const { holder } = await bootstrap(this.log, this.snapshots, this.logger.child({ timeTravel: seq }), seq);
    return holder;
  }

  /** Drops least recently used states over the budget; the one just built stays even if alone it is over. */
  private evict(keep: number): void {
    for (const [seq, e] of this.entries) {
      if (this.bytes <= this.maxBytes) return;
      if (seq === keep || e.bytes === 0) continue;
      this.entries.delete(seq);
      this.bytes -= e.bytes;
    }
  }
}
