// What changed in a holder since it was last asked: the fragments whose rows changed (and
// which rows), and whether its layout did (indexes, fields, views, fragments, bit depths). Off
// unless query workers read the state (service/query-workers/): the engine then publishes each
// durable group's changes to them as frozen rows (engine/frozen-feed.ts). Off, it costs one
// boolean test per write.

/** What the tracker asks of a fragment (state/fragment.ts). */
export interface DirtyRows {
  /** Rows changed since the last call, with their changes ('all': any may have), and forgets them. */
  takeDirty(): Map<number, unknown> | 'all';
}

export class FragmentChanges {
  enabled = false;
  /** Fragments with changed rows since the last take(). */
  readonly fragments = new Set<DirtyRows>();
  /** The layout changed since the last take(). */
  layout = false;

  /** Hands over what changed and starts afresh. */
  take(): { fragments: DirtyRows[]; layout: boolean } {
    const out = { fragments: [...this.fragments], layout: this.layout };
    this.fragments.clear();
    this.layout = false;
    return out;
  }

  noteLayout(): void {
    if (this.enabled) this.layout = true;
  }
}
