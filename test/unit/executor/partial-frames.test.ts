// The binary form of a holder's partials (executor/partial-frames.ts): whatever the chunks the
// bytes arrive in, the reader gives back the partials that were written (large rows as each
// shard's offsets, the rest as JSON in the header); a cut, padded or foreign answer is refused.
import { describe, expect, it } from 'vitest';
import { FramesReader, encodeFrames } from '../../../src/executor/partial-frames.js';
import type { CallPartial } from '../../../src/executor/partial.js';
import { WireError } from '../../../src/executor/partial-wire.js';
import { ShardColumns } from '../../../src/executor/shard-columns.js';

function offsets(n: number, seed: number): Uint32Array {
  const out = new Uint32Array(n);
  let at = seed % 5;
  for (let i = 0; i < n; i++) {
    out[i] = at;
    at += 1 + ((i * 31 + seed) % 7);
  }
  return out;
}

const big = new ShardColumns([
  { shard: 0, offsets: offsets(150_000, 1) },
  { shard: 3, offsets: offsets(70_001, 2) },
  { shard: 9, offsets: new Uint32Array(0) },
]);
const PARTIALS: CallPartial[] = [
  { kind: 'columns', columns: big },
  { kind: 'count', n: 42 },
  { kind: 'columns', columns: [5, 1_048_576 * 2 + 3, (1n << 60n) + 5n] },
  { kind: 'columns', columns: new ShardColumns([{ shard: 7, offsets: offsets(3, 9) }]) },
  { kind: 'rows', ids: [1, 2, 3] },
];

function bytes(): Uint8Array {
  return Buffer.concat([...encodeFrames(PARTIALS)]);
}

function plain(ps: CallPartial[]): unknown[] {
  return ps.map((p) => (p.kind === 'columns' && p.columns instanceof ShardColumns ? p.columns.toArray() : p));
}

describe('partials in binary', () => {
  it('reads back what was written, in any chunking', () => {
    const all = bytes();
    for (const size of [1, 7, 4096, 65_536, all.length]) {
      if (size === 1) {
        // One byte a chunk over the header and the first shard's start only (1.5 MB byte by byte is slow).
        const r = new FramesReader();
        const head = 4096;
        for (let i = 0; i < head; i++) r.push(all.subarray(i, i + 1));
        r.push(all.subarray(head));
        expect(plain(r.end())).toEqual(plain(PARTIALS));
        continue;
      }
      const r = new FramesReader();
      for (let at = 0; at < all.length; at += size) r.push(all.subarray(at, at + size));
      const got = r.end();
      expect(plain(got)).toEqual(plain(PARTIALS));
      const first = got[0];
      expect(first.kind === 'columns' && first.columns instanceof ShardColumns).toBe(true);
    }
  });

  it('refuses an answer cut short, one with bytes past its end, and a foreign one', () => {
    const all = bytes();
    const cut = new FramesReader();
    cut.push(all.subarray(0, all.length - 1));
    expect(() => cut.end()).toThrow(WireError);
    const long = new FramesReader();
    expect(() => long.push(Buffer.concat([all, Buffer.from([0])]))).toThrow(WireError);
    const foreign = new FramesReader();
    expect(() => foreign.push(Buffer.from('{"partials":[]}'))).toThrow(WireError);
  });
});
