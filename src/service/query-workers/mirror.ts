// A worker thread's read-only picture of the durable state, built from the engine's
// publications (state/published.ts): the schema as plain state objects, and each fragment's
// rows as frozen bytes in shared memory, viewed lazily (the first read of a row makes its
// CRoaring view, which stays until the row changes). A row's bytes are the ones the request
// thread holds; only a row published as patches (a few bits set or cleared) is copied, here,
// to apply them, until its next image (engine/frozen-feed.ts bounds such rows).
import { FrozenRow } from '../../roaring/frozen.js';
import { Field } from '../../state/field.js';
import { Fragment } from '../../state/fragment.js';
import { Index } from '../../state/index-state.js';
import type { FragmentDelta, IndexLayout, Publication, RowImage } from '../../state/published.js';
import type { ReadonlyIndex } from '../../state/readonly.js';
import { View, fragmentLayout } from '../../state/view.js';

const pathOf = (d: { index: string; field: string; view: string; shard: number }): string =>
  `${d.index}\u0000${d.field}\u0000${d.view}\u0000${d.shard}`;

export class StateMirror {
  private indexes = new Map<string, Index>();
  private layout: IndexLayout[] = [];
  /** Every fragment by path, changed in place by the publications. */
  private readonly frags = new Map<string, Fragment>();
  /** One byte view per shared buffer. */
  private readonly bytes = new WeakMap<SharedArrayBuffer, Uint8Array>();
  /** Sequence of the last publication applied. */
  seq = 0;

  index(name: string): ReadonlyIndex | undefined {
    return this.indexes.get(name);
  }

  apply(pub: Publication): void {
    for (const d of pub.fragments) this.applyDelta(d);
    if (pub.layout !== undefined) {
      this.layout = pub.layout;
      this.rebuild();
    } else for (const d of pub.fragments) this.refresh(d);
    this.seq = pub.seq;
  }

  private applyDelta(d: FragmentDelta): void {
    const path = pathOf(d);
    let f = this.frags.get(path);
    if (f === undefined || d.replace) {
      f = new Fragment(d.shard);
      this.frags.set(path, f);
      const images = [...d.set].sort((a, b) => a.row - b.row);
      const frozen = images.map((img) => this.frozen(img));
      // Adopted on first touch: a fragment no query reads never gets its row table.
      if (images.length > 0) f.defer(() => ({ rows: images.map((img) => img.row), frozen }));
    } else {
      for (const r of d.removed) f.clearRow(r);
      for (const img of d.set) f.replaceFrozen(img.row, this.frozen(img));
    }
    for (const p of d.patched) {
      if (p.set.length > 0) f.addBits(p.row, p.set);
      if (p.cleared.length > 0) f.removeBits(p.row, p.cleared);
    }
  }

  private frozen(img: RowImage): FrozenRow {
    let u8 = this.bytes.get(img.buf);
    if (u8 === undefined) {
      u8 = new Uint8Array(img.buf);
      this.bytes.set(img.buf, u8);
    }
    return new FrozenRow(u8, img.at, img.len, img.size);
  }

  /** A changed fragment of an unchanged layout: its view gets the fragment (new when replaced). */
  private refresh(d: FragmentDelta): void {
    const view = this.indexes.get(d.index)?.fields.get(d.field)?.views.get(d.view);
    if (view !== undefined) view.fragments.set(d.shard, this.fragment(pathOf(d), d.shard));
  }

  /** The whole tree from the layout; fragments and rows no longer in it are dropped. */
  private rebuild(): void {
    const indexes = new Map<string, Index>();
    const live = new Set<string>();
    for (const il of this.layout) {
      const index = new Index(il.name, { ...il.options });
      for (const fl of il.fields) {
        const field = new Field(fl.name, { ...fl.options });
        field.bitDepth = fl.bitDepth;
        for (const [vname, shards] of fl.views) {
          const view = new View(vname);
          for (const shard of shards) {
            const path = pathOf({ index: il.name, field: fl.name, view: vname, shard });
            live.add(path);
            view.fragments.set(shard, this.fragment(path, shard));
          }
          field.views.set(vname, view);
        }
        index.fields.set(fl.name, field);
      }
      indexes.set(il.name, index);
    }
    for (const path of [...this.frags.keys()]) if (!live.has(path)) this.frags.delete(path);
    this.indexes = indexes;
    // Index.shards() caches against this counter: the tree is new.
    fragmentLayout.version++;
  }

  private fragment(path: string, shard: number): Fragment {
    let f = this.frags.get(path);
    if (f === undefined) {
      f = new Fragment(shard);
      this.frags.set(path, f);
    }
    return f;
  }
}
