// Publishes the state to query worker threads (docs/ARCHITECTURE.md "Query workers"). At the end
// of every write group the rows it changed are published: a row with a few bits set or cleared
// as those bits (a patch, which each worker applies to its own copy of the row), any other as
// its new image frozen into shared memory (one buffer per group; the holder's own copy of the
// row becomes a view of those bytes, so every thread reads one copy). The workers' patched
// copies are bounded: past DIVERGED_BUDGET bytes of such rows, they are all frozen again and
// published as images. The publication waits here until the group is durable: workers only ever
// hold durable state, and the pool hands them every publication up to the durable sequence
// before it sends a query.
import { type FrozenRow, packFrozen } from '../roaring/frozen.js';
import type { Bitmap } from '../roaring/bitmap.js';
import type { Fragment, RowChange } from '../state/fragment.js';
import type { Holder } from '../state/holder.js';
import type { FragmentDelta, IndexLayout, Publication, RowImage } from '../state/published.js';

/**
 * Bytes of the rows published as patches since their last image, past which they are frozen
 * again: each worker holds its own copy of such a row (about its serialized size), so this bounds
 * the memory the workers add beyond the one shared copy, while a row written again and again
 * (a hot row's point writes) is not re-frozen and re-sent whole on every write.
 */
export const DIVERGED_BUDGET = 32 * 1024 * 1024;

type Path = { index: string; field: string; view: string; shard: number };

export class FrozenFeed {
  private readonly pending: Publication[] = [];
  /** Rows published as patches since their last image, with their bytes when they diverged. */
  private readonly diverged = new Map<Fragment, { path: Path; rows: Map<number, number> }>();
  private divergedBytes = 0;
  /** Every fragment's path, as of the last layout change. */
  private paths: Map<Fragment, Path> | undefined;

  constructor(
    private holder: Holder,
    /** DIVERGED_BUDGET; tests lower it. */
    private readonly budget = DIVERGED_BUDGET,
  ) {}

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
    this.diverged.clear();
    this.divergedBytes = 0;
    this.paths = undefined;
    const fragments: FragmentDelta[] = [];
    const freeze = new Freezer();
    for (const [path, frag] of walk(this.holder, (path, frag): [Path, Fragment] => [path, frag])) {
      const delta: FragmentDelta = { ...path, set: [], patched: [], removed: [], replace: true };
      for (const row of frag.rowIds()) freeze.row(frag, row, delta);
      fragments.push(delta);
    }
    freeze.pack();
    return { seq: this.holder.appliedSeq, layout: layoutOf(this.holder), fragments };
  }

  /**
   * The engine's state became `holder`, rebuilt from the durable log after a disk-full stall
   * (engine.ts `stall`). The captured publications go: those of groups that never became durable
   * must not reach the workers (their sequences are given out again after the resume), and the
   * durable ones are covered by what follows. When the workers are fed, the whole new state is
   * published in their place; its sequence is the durable end, so the next query hands it out,
   * and its layout drops whatever the workers hold that the new state lacks.
   */
  replace(holder: Holder): void {
    const fed = this.enabled;
    this.holder = holder;
    this.pending.length = 0;
    if (fed) this.pending.push(this.enable());
  }

  /** After a write group ending at `seq` was applied: freezes what it changed, to publish once durable. */
  capture(seq: number): void {
    if (!this.enabled) return;
    const { fragments: changed, layout } = this.holder.changes.take();
    if (changed.length === 0 && !layout) return;
    // The paths of the fragments, found again (a walk of the whole state) only when the layout
    // changed: a write group's capture is then as long as its changes, not as the state.
    if (layout || this.paths === undefined) this.paths = new Map(walk(this.holder, (path, frag) => [frag, path]));
    const deltas = new Map<Fragment, FragmentDelta>();
    const freeze = new Freezer();
    for (const c of changed) {
      const frag = c as Fragment;
      // A fragment new to the paths without a layout change (none should be): walk again.
      if (!this.paths.has(frag)) this.paths = new Map(walk(this.holder, (path, f) => [f, path]));
      const path = this.paths.get(frag);
      // A fragment of a deleted field or index: its marks are forgotten below.
      if (path === undefined) continue;
      const dirty = frag.takeDirty();
      const replace = dirty === 'all';
      const delta: FragmentDelta = { ...path, set: [], patched: [], removed: [], replace };
      deltas.set(frag, delta);
      if (replace) {
        this.undiverge(frag);
        for (const row of frag.rowIds()) freeze.row(frag, row, delta);
      } else for (const [row, change] of dirty) this.change(frag, path, row, change, delta, freeze);
    }
    // Fragments of deleted fields or indexes keep their marks: forget them too.
    for (const f of changed) f.takeDirty();
    if (layout) for (const f of [...this.diverged.keys()]) if (!this.paths.has(f)) this.undiverge(f);
    if (this.divergedBytes > this.budget) this.refreeze(deltas, freeze);
    freeze.pack();
    this.pending.push({ seq, fragments: [...deltas.values()], ...(layout ? { layout: layoutOf(this.holder) } : {}) });
  }

  /** One changed row into `delta`: its patch, its image, or its removal. */
  private change(
    frag: Fragment,
    path: Path,
    row: number,
    change: RowChange,
    delta: FragmentDelta,
    freeze: Freezer,
  ): void {
    const bm = change === 'image' ? undefined : frag.peekRow(row);
    if (change === 'image' || bm === undefined || bm.isEmpty) {
      this.undiverge(frag, row);
      freeze.row(frag, row, delta);
      return;
    }
    delta.patched.push({ row, set: Uint32Array.from(change.set), cleared: Uint32Array.from(change.cleared) });
    let d = this.diverged.get(frag);
    if (d === undefined) {
      d = { path, rows: new Map() };
      this.diverged.set(frag, d);
    }
    if (!d.rows.has(row)) {
      const bytes = bm.getSerializationSizeInBytes(true);
      d.rows.set(row, bytes);
      this.divergedBytes += bytes;
    }
  }

  /** Forgets a row's divergence (all the fragment's rows when `row` is undefined). */
  private undiverge(frag: Fragment, row?: number): void {
    const d = this.diverged.get(frag);
    if (d === undefined) return;
    for (const [r, bytes] of d.rows)
      if (row === undefined || r === row) {
        this.divergedBytes -= bytes;
        d.rows.delete(r);
      }
    if (d.rows.size === 0) this.diverged.delete(frag);
  }

  /** Every diverged row published as its image instead of its patch: the workers drop their copies. */
  private refreeze(deltas: Map<Fragment, FragmentDelta>, freeze: Freezer): void {
    for (const [frag, { path, rows }] of this.diverged) {
      let delta = deltas.get(frag);
      if (delta === undefined) {
        delta = { ...path, set: [], patched: [], removed: [], replace: false };
        deltas.set(frag, delta);
      }
      delta.patched = delta.patched.filter((p) => !rows.has(p.row));
      for (const row of rows.keys()) freeze.row(frag, row, delta);
    }
    this.diverged.clear();
    this.divergedBytes = 0;
  }

  /**
   * Whether every change applied to the holder was handed out by takeDurable(): nothing captured
   * waits for its durability and nothing applied waits for its capture. Then a thread holding
   * every publication holds the holder's state.
   */
  get handedOut(): boolean {
    return this.pending.length === 0 && this.holder.changes.fragments.size === 0 && !this.holder.changes.layout;
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

function* walk<T>(holder: Holder, each: (path: Path, frag: Fragment) => T): Generator<T> {
  for (const [index, idx] of holder.indexes)
    for (const [field, f] of idx.fields)
      for (const [view, v] of f.views)
        for (const [shard, frag] of v.fragments) yield each({ index, field, view, shard }, frag);
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
