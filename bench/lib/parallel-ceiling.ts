// The raw substrate's own parallel speed-up (issue 25): the intersections of a 256-shard
// Count(Intersect) (roaring's andCardinality of two 10% rows a shard, nothing of ours) done by
// one thread, then by two threads at once, each over half of the shards and its own copy of
// them. At 10% every container is an 8 KiB bitmap, so one pass reads 64 MiB: more than any
// cache, and the two threads share the machine's memory bandwidth. Their speed-up bounds what
// any split of the query over threads can reach on this machine.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { Bitmap } from '../../src/roaring/bitmap.js';
import { bitmapPool } from './bitmaps.js';

const SHARDS = 256;

interface CeilingJob {
  parallelCeiling: true;
  from: number;
  to: number;
  passes: number;
  /** Int32 0 until the main thread starts every thread at once. */
  go: SharedArrayBuffer;
}

export interface ParallelCeiling {
  /** ms a pass over the 256 shards on one thread. */
  oneThreadMs: number;
  /** ms a pass with two threads at once (wall time, both started together). */
  twoThreadsMs: number;
  /** oneThreadMs / twoThreadsMs. */
  speedup: number;
}

/** Rows 1 and 2 of shards [from, to): distinct bitmaps (clones of a small random pool). */
function shardRows(from: number, to: number): [Bitmap, Bitmap][] {
  const pool = bitmapPool(0.1, 6);
  const out: [Bitmap, Bitmap][] = [];
  for (let s = from; s < to; s++) out.push([pool[s % 6].clone(), pool[(s + 1) % 6].clone()]);
  return out;
}

function passes(rows: [Bitmap, Bitmap][], n: number): number {
  let sum = 0;
  for (let k = 0; k < n; k++) for (const [a, b] of rows) sum += a.andCardinality(b);
  return sum;
}

/** Measures the ceiling; `passes` passes a measurement (about 2 ms each here). */
export async function parallelCeiling(n = 200): Promise<ParallelCeiling> {
  const rows = shardRows(0, SHARDS);
  passes(rows, 5);
  let t0 = performance.now();
  passes(rows, n);
  const oneThreadMs = (performance.now() - t0) / n;
  const go = new SharedArrayBuffer(4);
  const workers = [0, 1].map(
    (i) =>
      new Worker(new URL(import.meta.url), {
        workerData: {
          parallelCeiling: true,
          from: (i * SHARDS) / 2,
          to: ((i + 1) * SHARDS) / 2,
          passes: n,
          go,
        } satisfies CeilingJob,
      }),
  );
  try {
    const answers = workers.map((w) => nextMessage(w));
    await Promise.all(answers.map((a) => a.ready));
    t0 = performance.now();
    Atomics.store(new Int32Array(go), 0, 1);
    Atomics.notify(new Int32Array(go), 0);
    await Promise.all(answers.map((a) => a.done));
    const twoThreadsMs = (performance.now() - t0) / n;
    return { oneThreadMs, twoThreadsMs, speedup: oneThreadMs / twoThreadsMs };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** A worker's two messages: built and warm, then done (both fail when the worker does). */
function nextMessage(w: Worker): { ready: Promise<void>; done: Promise<void> } {
  const failed = new Promise<never>((_, reject) => w.once('error', reject));
  const message = (): Promise<void> => new Promise<void>((resolve) => w.once('message', () => resolve()));
  const ready = Promise.race([message(), failed]);
  const done = ready.then(() => Promise.race([message(), failed]));
  failed.catch(() => undefined);
  return { ready, done };
}

function isCeilingJob(d: unknown): d is CeilingJob {
  return typeof d === 'object' && d !== null && (d as { parallelCeiling?: unknown }).parallelCeiling === true;
}

if (!isMainThread && isCeilingJob(workerData)) {
  const job = workerData;
  const rows = shardRows(job.from, job.to);
  passes(rows, 5);
  parentPort?.postMessage('ready');
  Atomics.wait(new Int32Array(job.go), 0, 0);
  passes(rows, job.passes);
  parentPort?.postMessage('done');
}
