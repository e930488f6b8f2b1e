// Publishes the state to query worker threads (docs/ARCHITECTURE.md "Query workers"). At the end
// of every write group the rows it changed are frozen into shared memory (one buffer per
// group) and the holder's own copy of each becomes a view of those bytes, so every thread reads
// one copy. The publication waits here until the group is durable: workers only ever hold
// durable state, and the pool hands them every publication up to the durable sequence before
// it sends a query.
import { type FrozenRow, packFrozen } from '../roaring/frozen.js';
import type { Bitmap } from '../roaring/bitmap.js';
import type { Fragment } from '../state/fragment.js';
import type { Holder } from '../state/holder.js';
import type { FragmentDelta, IndexLayout, Publication, RowImage } from '../state/published.js';

export class FrozenFeed {
  private readonly pending: Publication[] = [];

  constructor(private readonly holder: Holder) {}

  get enabled(): boolean {
    return this.holder.changes.enabled;
  }

  /**
   * Turns change tracking on and returns the whole state as one publication. The caller makes
   * sure the applied state is durable (at startup, before any write).
   */
  enable(): Publication {
    this.holder.changes.enabled = true;
    this.holder.changes.take();
    const fragments: FragmentDelta[] = [];
    const freeze = new Freezer();
    for (const [path, frag] of walk(this.holder)) {
      const delta: FragmentDelta = { ...path, set: [], removed: [], replace: true };
      for (const row of frag.rowIds()) freeze.row(frag, row, delta);
      fragments.push(delta);
    }
    freeze.pack();
    return { seq: this.holder.appliedSeq, layout: layoutOf(this.holder), fragments };
  }

  /** After a write group ending at `seq` was applied: freezes what it changed, to publish once durable. */
  capture(seq: number): void {
    if (!this.enabled) return;
    const { fragments: changed, layout } = this.holder.changes.take();
    if (changed.length === 0 && !layout) return;
    const wanted = new Set<unknown>(changed);
    const fragments: FragmentDelta[] = [];
    const freeze = new Freezer();
    for (const [path, frag] of walk(this.holder)) {
      if (!wanted.has(frag)) continue;
      const dirty = frag.takeDirty();
      const replace = dirty === 'all';
      const delta: FragmentDelta = { ...path, set: [], removed: [], replace };
      for (const row of replace ? frag.rowIds() : dirty) freeze.row(frag, row, delta);
      fragments.push(delta);
    }
    // Fragments of deleted fields or indexes keep their marks: forget them too.
    for (const f of changed) f.takeDirty();
    freeze.pack();
    this.pending.push({ seq, fragments, ...(layout ? { layout: layoutOf(this.holder) } : {}) });
  }

  /** The captured publications of groups durable by now (up to `durableSeq`), in order. */
  takeDurable(durableSeq: number): Publication[] {
    let n = 0;
    while (n < this.pending.length && this.pending[n].seq <= durableSeq) n++;
    return n === 0 ? [] : this.pending.splice(0, n);
  }
}

/** Rows to freeze into one shared buffer; packed rows already in shared memory are referenced. */
class Freezer {
  private readonly bitmaps: Bitmap[] = [];
  private readonly owners: { frag: Fragment; row: number; delta: FragmentDelta }[] = [];

  row(frag: Fragment, row: number, delta: FragmentDelta): void {
    const packed = frag.packedRow(row);
    if (packed !== undefined && packed.buf.buffer instanceof SharedArrayBuffer) {
      delta.set.push(image(row, packed));
      return;
    }
    const bm = frag.peekRow(row);
    if (bm === undefined || bm.isEmpty) {
      if (!delta.replace) delta.removed.push(row);
      return;
    }
    // A frozen view cannot be run-optimized in place: pack a copy (its view goes with repack).
    this.bitmaps.push(bm.isFrozen ? bm.clone() : bm);
    this.owners.push({ frag, row, delta });
  }

  pack(): void {
    if (this.bitmaps.length === 0) return;
    const frozen = packFrozen(this.bitmaps);
    for (let i = 0; i < frozen.length; i++) {
      const { frag, row, delta } = this.owners[i];
      delta.set.push(image(row, frozen[i]));
      frag.repack(row, frozen[i]);
    }
  }
}

function image(row: number, f: FrozenRow): RowImage {
  return { row, buf: f.buf.buffer as SharedArrayBuffer, at: f.buf.byteOffset + f.start, len: f.len, size: f.size };
}

type Path = { index: string; field: string; view: string; shard: number };

function* walk(holder: Holder): Generator<[Path, Fragment]> {
  for (const [index, idx] of holder.indexes)
    for (const [field, f] of idx.fields)
      for (const [view, v] of f.views)
        for (const [shard, frag] of v.fragments) yield [{ index, field, view, shard }, frag];
}

function layoutOf(holder: Holder): IndexLayout[] {
  return [...holder.indexes.values()].map((idx) => ({
    name: idx.name,
    options: { ...idx.options },
    fields: [...idx.fields.values()].map((f) => ({
      name: f.name,
      options: { ...f.options },
      bitDepth: f.bitDepth,
      views: [...f.views.values()].map((v): [string, number[]] => [v.name, [...v.fragments.keys()]]),
    })),
  }));
}
