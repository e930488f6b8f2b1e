// The request thread's share of a query (service/query-workers/here-share.ts): the shares cover
// the query's shards once, in order, each with one shard at least; the request thread's fraction
// grows when it had to wait for a worker, shrinks when it did not, and stays within its bounds.
import { describe, expect, it } from 'vitest';
import { HereSplit } from '../../../src/service/query-workers/here-share.js';

const shards = (n: number): number[] => Array.from({ length: n }, (_, i) => i * 3);

describe('HereSplit', () => {
  it('cuts the shards into the request thread share and one per worker, in order, none empty', () => {
    for (const [n, workers] of [
      [256, 1],
      [256, 3],
      [2, 1],
      [3, 5],
      [7, 2],
    ]) {
      const split = new HereSplit(workers + 1);
      const cut = split.shares(shards(n), workers);
      expect(cut.flat()).toEqual(shards(n));
      expect(cut.length).toBe(Math.min(workers, n - 1) + 1);
      for (const share of cut) expect(share.length).toBeGreaterThan(0);
    }
    // Two threads: half each to start with.
    expect(new HereSplit(2).shares(shards(256), 1).map((s) => s.length)).toEqual([128, 128]);
  });

  it('gives the request thread more when it waited, less when the answers were in, within bounds', () => {
    const split = new HereSplit(2);
    const start = split.hereFraction;
    split.note(true);
    expect(split.hereFraction).toBeGreaterThan(start);
    const up = split.hereFraction;
    split.note(false);
    expect(split.hereFraction).toBeLessThan(up);
    for (let i = 0; i < 1000; i++) split.note(true);
    const high = split.hereFraction;
    expect(high).toBeLessThan(1);
    expect(split.shares(shards(256), 1)[1].length).toBeGreaterThan(0);
    for (let i = 0; i < 1000; i++) split.note(false);
    expect(split.hereFraction).toBeGreaterThan(0);
    expect(split.hereFraction).toBeLessThan(high);
    expect(split.shares(shards(256), 1)[0].length).toBeGreaterThan(0);
  });
});
