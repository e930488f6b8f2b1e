// The request thread's share of a query (service/query-workers/here-share.ts): the threads of a
// shared phase claim the query's shards chunk by chunk from one board, so every shard is taken
// once, in order, in chunks that shrink towards the end; a worker job closed before it started
// takes none, and one that started cannot be closed; its answer is seen on the board. ShareGain
// runs reads the faster way lately, and the other way now and then.
import { describe, expect, it } from 'vitest';
import {
  ShareGain,
  ShardClaims,
  claimChunk,
  claimedWork,
  claimsDone,
  startClaiming,
} from '../../../src/service/query-workers/here-share.js';
import { drainSync } from '../../../src/executor/run.js';

const shards = (n: number): number[] => Array.from({ length: n }, (_, i) => i * 3);

describe('ShardClaims', () => {
  it('gives every shard to one claimer once, in order, in chunks that shrink to one shard', () => {
    for (const [n, jobs] of [
      [256, 1],
      [256, 3],
      [2, 1],
      [7, 2],
      [1000, 1],
    ]) {
      const claims = new ShardClaims(jobs);
      const slots = [claims.here, ...Array.from({ length: jobs }, (_, i) => claims.slotOf(i))];
      const taken: [number, number][] = [];
      // The claimers take turns at random, as threads do.
      for (let k = 0; ; k = (k * 7 + 3) % slots.length) {
        const r = claimChunk(slots[k], n);
        if (r === undefined) break;
        taken.push(r);
      }
      expect(taken.map(([from, to]) => to - from).reduce((a, b) => a + b, 0)).toBe(n);
      for (let i = 1; i < taken.length; i++) expect(taken[i][0]).toBe(taken[i - 1][1]);
      const sizes = taken.map(([from, to]) => to - from);
      for (let i = 1; i < sizes.length; i++) expect(sizes[i]).toBeLessThanOrEqual(sizes[i - 1]);
      expect(sizes[sizes.length - 1]).toBe(1);
      // Guided chunks: a few claims per thread and doubling of the shards, not one per shard.
      if (n >= 256) expect(sizes.length).toBeLessThan(n / 4);
    }
    // Two threads: the first claim is a quarter of the shards.
    expect(claimChunk(new ShardClaims(1).here, 256)).toEqual([0, 64]);
  });

  it('runs the work over each chunk a thread claims, and none once the others took them all', () => {
    const claims = new ShardClaims(1);
    const all = shards(40);
    const mine = drainSync(
      claimedWork(claims.here, all, function* (chunk) {
        yield;
        return chunk;
      }),
    );
    expect(mine.flat()).toEqual(all);
    expect(mine.length).toBeGreaterThan(1);
    expect(
      drainSync(
        claimedWork(claims.slotOf(0), all, function* (chunk) {
          yield;
          return chunk;
        }),
      ),
    ).toEqual([]);
  });

  it('closes a worker job that has not started (it then claims nothing), never one that has', () => {
    const claims = new ShardClaims(2);
    expect(startClaiming(claims.slotOf(0))).toBe(true);
    expect(claims.close(0)).toBe(false);
    expect(claims.close(1)).toBe(true);
    expect(startClaiming(claims.slotOf(1))).toBe(false);
    expect(claimChunk(claims.here, 10)).toEqual([0, 2]);
    // Once closed, a job stays closed.
    expect(claims.close(1)).toBe(false);
    expect(startClaiming(claims.slotOf(1))).toBe(false);
  });

  it('sees a started job answer on the board, and gives up spinning after its bound', () => {
    const claims = new ShardClaims(1);
    expect(startClaiming(claims.slotOf(0))).toBe(true);
    expect(claims.spinUntilDone(0, 0.05)).toBe(false);
    claimsDone(claims.slotOf(0));
    expect(claims.spinUntilDone(0, 0.05)).toBe(true);
    expect(claims.close(0)).toBe(false);
  });
});

describe('ShareGain', () => {
  /** How many of `n` reads run alone, each noted at the given ms a shard for its way. */
  const alones = (gain: ShareGain, n: number, shared: number, alone: number): number => {
    let count = 0;
    for (let i = 0; i < n; i++) {
      const a = gain.runAlone();
      if (a) count++;
      gain.note(a, a ? alone : shared);
    }
    return count;
  };

  it('shares while sharing is faster, running one read in 32 alone to measure it', () => {
    const gain = new ShareGain();
    expect(alones(gain, 320, 0.005, 0.007)).toBe(10);
  });

  it('runs reads alone once that is faster, sharing one in 8, and shares again at the first faster shared read', () => {
    const gain = new ShareGain();
    // Sharing measured first; alone is measured at the first probe (read 32) and found faster.
    alones(gain, 32, 0.01, 0.006);
    expect(alones(gain, 320, 0.01, 0.006)).toBe(280);
    // The machine frees up: the next shared probe, faster than alone, turns it back at once.
    expect(alones(gain, 8, 0.004, 0.006)).toBe(7);
    expect(alones(gain, 320, 0.004, 0.006)).toBe(10);
  });

  it('keeps the way in use when a probe of the other way is slower', () => {
    const gain = new ShareGain();
    alones(gain, 32, 0.01, 0.006);
    // Alone in use; shared probes slower than alone's median leave it so.
    expect(alones(gain, 16, 0.007, 0.006)).toBe(14);
    expect(alones(gain, 16, 0.007, 0.006)).toBe(14);
  });

  it('is not flipped by one slow read', () => {
    const gain = new ShareGain();
    alones(gain, 100, 0.005, 0.007);
    gain.note(false, 1);
    expect(alones(gain, 15, 0.005, 0.007)).toBeLessThanOrEqual(1);
  });
});
