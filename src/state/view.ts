import type { FragmentChanges } from './changes.js';
import { Fragment } from './fragment.js';

/**
 * Bumped whenever a fragment is created or fields/indexes are dropped: Index.shards() caches its
 * answer against it, since queries ask for the available shards on every call.
 */
export const fragmentLayout = { version: 0 };

/** A view of a field (`standard`, `standard_2019…`, `bsig_<f>`): its fragments by shard. */
export class View {
  readonly fragments = new Map<number, Fragment>();

  constructor(
    readonly name: string,
    private readonly changes?: FragmentChanges,
  ) {}

  fragment(shard: number): Fragment | undefined {
    return this.fragments.get(shard);
  }

  /** Creates the fragment on first write; only apply() (events/kinds/) calls this. */
  fragmentForWrite(shard: number): Fragment {
    let f = this.fragments.get(shard);
    if (f === undefined) {
      f = new Fragment(shard, this.changes);
      this.fragments.set(shard, f);
      fragmentLayout.version++;
      this.changes?.noteLayout();
    }
    return f;
  }
}
