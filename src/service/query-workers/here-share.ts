// The request thread's own share of a query (offload.ts): when no job waits or runs, the
// request thread computes the first share while the workers compute the rest, so as many threads
// compute as there are cores (one worker stays idle), and the two thread hand-overs of a job
// (waking a worker, waking the request thread with its answer) leave the query's critical path:
// the worker wakes while the request thread computes, and its answer is there when the request
// thread's share ends. A woken thread starts late (the wake-up of an idle core, more under load),
// so its share is sized from what the last queries showed, not fixed: HereSplit moves the
// request thread's fraction of the shards until the workers' answers are mostly in when its
// share ends.

/** Bounds of the request thread's fraction: each side keeps some of the work. */
const MIN_FRACTION = 0.1;
const MAX_FRACTION = 0.9;
/**
 * Steps of the fraction: up when the request thread waited for a worker (its answer came after
 * the share ended: a hand-over back on the critical path), down a quarter as much when it did
 * not. The fraction settles where the request thread waits about one query in five.
 */
const STEP_WAITED = 0.02;
const STEP_READY = 0.005;

export class HereSplit {
  /** The request thread's fraction of a query's shards; starts as one thread's equal part. */
  private fraction: number;

  constructor(threads: number) {
    this.fraction = Math.min(MAX_FRACTION, Math.max(MIN_FRACTION, 1 / Math.max(1, threads)));
  }

  get hereFraction(): number {
    return this.fraction;
  }

  /**
   * The request thread's share first, then one contiguous share per worker (`workers` of them,
   * fewer with fewer shards); every share holds one shard at least.
   */
  shares(shards: readonly number[], workers: number): number[][] {
    const n = shards.length;
    const mine = Math.min(n - 1, Math.max(1, Math.round(n * this.fraction)));
    const out = [shards.slice(0, mine)];
    const rest = n - mine;
    const k = Math.min(workers, rest);
    for (let i = 0; i < k; i++)
      out.push(shards.slice(mine + Math.floor((i * rest) / k), mine + Math.floor(((i + 1) * rest) / k)));
    return out;
  }

  /** After the request thread's share: whether it then had to wait for a worker's answer. */
  note(waited: boolean): void {
    const f = waited ? this.fraction + STEP_WAITED : this.fraction - STEP_READY;
    this.fraction = Math.min(MAX_FRACTION, Math.max(MIN_FRACTION, f));
  }
}
