// Summaries of shared reads' timelines (src/service/query-workers/timeline.ts): where a
// 256-shard read's wall time goes between the request thread and the worker (issue 25), as the
// median over a run's reads of each interval, taken read by read.
import type { QueryTimeline, ThreadMarks } from '../../src/service/query-workers/timeline.js';
import type { Reporter } from './report.js';

type Interval = [string, (t: QueryTimeline, w: ThreadMarks | undefined) => number | undefined];

const diff = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined ? undefined : a - b;

const INTERVALS: Interval[] = [
  ['request thread: compile, estimate, board (serial, before the post)', (t) => diff(t.at.boarded, t.at.begin)],
  [
    'request thread: posting the job (clone, send; longer when the woken worker takes its core)',
    (t) => diff(t.at.posted, t.at.boarded),
  ],
  ['worker: woken after the post began', (t, w) => diff(w?.received, t.at.boarded)],
  ['worker: received to first chunk (compile, turn)', (_, w) => diff(w?.firstChunk, w?.received)],
  ['request thread: first to last chunk', (t) => diff(t.here.lastChunk, t.here.firstChunk)],
  ['worker: first to last chunk', (_, w) => diff(w?.lastChunk, w?.firstChunk)],
  ["worker last chunk after the request thread's (imbalance)", (t, w) => diff(w?.lastChunk, t.here.lastChunk)],
  ['request thread: its last chunk to the answers taken (close, spin, wait)', (t) => diff(t.at.answers, t.at.hereDone)],
  ['request thread: merge and finalize', (t) => diff(t.at.finalized, t.at.answers)],
  ['whole read, begin to resolved', (t) => diff(t.at.resolved, t.at.begin)],
];

/** `label`'s median ms of each interval, the shards each thread took, and the per-shard cost ratio. */
export function reportTimelines(r: Reporter, label: string, timelines: readonly QueryTimeline[]): void {
  if (timelines.length === 0) return;
  const med = (f: (t: QueryTimeline, w: ThreadMarks | undefined) => number | undefined): number => {
    const xs = timelines
      .map((t) => f(t, t.workers[0]))
      .filter((x): x is number => x !== undefined && Number.isFinite(x));
    xs.sort((a, b) => a - b);
    return xs.length === 0 ? NaN : xs[xs.length >> 1];
  };
  r.figure(`${label}: timelines (reads)`, timelines.length, 'reads');
  for (const [name, f] of INTERVALS) r.figure(`${label}: ${name}`, med(f), 'ms');
  r.figure(
    `${label}: shards the request thread took`,
    med((t) => t.here.shards),
    'shards',
  );
  r.figure(
    `${label}: shards the worker took`,
    med((_, w) => w?.shards),
    'shards',
  );
  r.figure(
    `${label}: reads the worker took no shard of`,
    timelines.filter((t) => (t.workers[0]?.shards ?? 0) === 0).length / timelines.length,
    'of reads',
  );
  r.figure(
    `${label}: wall ms a shard, request thread / worker`,
    med((t, w) => {
      if (w?.firstChunk === undefined || w.lastChunk === undefined || w.shards === 0) return undefined;
      const hereMs = diff(t.here.lastChunk, t.here.firstChunk) ?? NaN;
      return hereMs / t.here.shards / ((w.lastChunk - w.firstChunk) / w.shards);
    }),
    '×',
  );
}
