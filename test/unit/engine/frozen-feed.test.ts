// The query workers' publications (engine/frozen-feed.ts): a point write on a large row travels
// as its bits (a patch the workers apply to their copy), not as the row re-frozen; past the
// budget of such rows they are frozen again and sent whole. Either way a worker's mirror
// (service/query-workers/mirror.ts) answers the holder's bits.
import { describe, expect, it } from 'vitest';
import { defaultFieldOptions } from '../../../src/domain/types.js';
import { FrozenFeed } from '../../../src/engine/frozen-feed.js';
import { StateMirror } from '../../../src/service/query-workers/mirror.js';
import { apply } from '../../../src/events/apply.js';
import { Holder } from '../../../src/state/holder.js';
import type { Publication } from '../../../src/state/published.js';

const ROW = Uint32Array.from({ length: 20_000 }, (_, i) => i * 7);

function holder(): Holder {
  const h = new Holder();
  apply(h, { type: 'IndexCreated', index: 'i', options: { keys: false, trackExistence: false } });
  apply(h, { type: 'FieldCreated', index: 'i', field: 'f', options: defaultFieldOptions('set') });
  apply(h, { type: 'BitsSet', index: 'i', field: 'f', view: 'standard', shard: 0, rows: [1], columns: [ROW] });
  return h;
}

/** One write group: `cols` set in row 1 of `shard` and `cleared` cleared, captured. */
function write(h: Holder, feed: FrozenFeed, cols: number[], cleared: number[] = [], shard = 0): void {
  const at = { index: 'i', field: 'f', view: 'standard', shard, rows: [1] };
  apply(h, { type: 'BitsSet', ...at, columns: [Uint32Array.from(cols)] });
  if (cleared.length > 0) apply(h, { type: 'BitsCleared', ...at, columns: [Uint32Array.from(cleared)] });
  h.appliedSeq++;
  feed.capture(h.appliedSeq);
}

const bitsOf = (m: StateMirror): number[] => [
  ...(m.index('i')?.field('f')?.view('standard')?.fragment(0)?.row(1)?.toArray() ?? []),
];

describe('frozen feed', () => {
  it('publishes a point write on a large row as a patch, which the mirror applies', () => {
    const h = holder();
    const feed = new FrozenFeed(h);
    const mirror = new StateMirror();
    mirror.apply(feed.enable());
    expect(bitsOf(mirror)).toEqual([...ROW]);
    write(h, feed, [1], [7]);
    write(h, feed, [3]);
    const pubs: Publication[] = feed.takeDurable(h.appliedSeq);
    expect(pubs.flatMap((p) => p.fragments.flatMap((d) => d.set))).toEqual([]);
    expect(pubs.flatMap((p) => p.fragments.flatMap((d) => d.patched.map((x) => [[...x.set], [...x.cleared]])))).toEqual(
      [
        [[1], [7]],
        [[3], []],
      ],
    );
    for (const p of pubs) mirror.apply(p);
    expect(bitsOf(mirror)).toEqual([
      ...(h.index('i')?.field('f')?.view('standard')?.fragment(0)?.row(1)?.toArray() ?? []),
    ]);
    expect(bitsOf(mirror)).toContain(3);
    expect(bitsOf(mirror)).not.toContain(7);
  });

  it('past its budget of patched rows, sends them as images again', () => {
    const h = holder();
    const feed = new FrozenFeed(h, 0);
    const mirror = new StateMirror();
    mirror.apply(feed.enable());
    write(h, feed, [5]);
    const [pub] = feed.takeDurable(h.appliedSeq);
    expect(pub.fragments.flatMap((d) => d.patched)).toEqual([]);
    expect(pub.fragments.flatMap((d) => d.set.map((img) => img.row))).toEqual([1]);
    mirror.apply(pub);
    expect(bitsOf(mirror)).toEqual([
      ...(h.index('i')?.field('f')?.view('standard')?.fragment(0)?.row(1)?.toArray() ?? []),
    ]);
  });

  it('after a rebuild from the durable log, publishes the new state whole and follows its writes', () => {
    const old = holder();
    const feed = new FrozenFeed(old);
    const mirror = new StateMirror();
    mirror.apply(feed.enable());
    // A group applied and captured whose append failed (a disk-full stall): never durable.
    write(old, feed, [2]);
    write(old, feed, [9], [], 3);
    // The engine's state rebuilt from the log: the original bits only, at the durable sequence.
    const rebuilt = holder();
    feed.replace(rebuilt);
    const pubs = feed.takeDurable(rebuilt.appliedSeq);
    expect(pubs.map((p) => p.seq)).toEqual([rebuilt.appliedSeq]);
    for (const p of pubs) mirror.apply(p);
    expect(bitsOf(mirror)).toEqual([...ROW]);
    expect(mirror.index('i')?.field('f')?.view('standard')?.fragment(3)).toBeUndefined();
    // Writes to the new state reach the workers; the old one's are not watched any more.
    write(rebuilt, feed, [4]);
    write(old, feed, [6]);
    for (const p of feed.takeDurable(rebuilt.appliedSeq)) mirror.apply(p);
    expect(bitsOf(mirror)).toContain(4);
    expect(bitsOf(mirror)).not.toContain(6);
    expect(bitsOf(mirror)).toEqual([
      ...(rebuilt.index('i')?.field('f')?.view('standard')?.fragment(0)?.row(1)?.toArray() ?? []),
    ]);
  });
});
