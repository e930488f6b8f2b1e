// Issue 25, in-process: executor throughput of Count(Intersect) over 256 shards at 10% (rows 1
// and 2) on the request thread alone, and spread over a pool of 1 and of 2 query workers (the
// server's path: validate here, partials in the workers, merge here), at 1 and 4 queries in
// flight; at 1 in flight with 2 workers, with the request thread's share (here-share.ts) and
// with the workers alone. Beside it, the two designs' write costs: freezing a written row into shared memory
// and publishing it (the design built: workers read immutable shared rows), and a message
// round trip to a worker thread (what shard-per-core ownership pays per write routed to its
// owner). docs/ARCHITECTURE.md "Query workers" reads these figures.
import { loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { pino } from 'pino';
import { LIMITS } from '../src/config/limits.js';
import { defaultFieldOptions } from '../src/domain/types.js';
import { FrozenFeed } from '../src/engine/frozen-feed.js';
import type { StatePublisher } from '../src/engine/ports.js';
import type { EventSink } from '../src/events/types.js';
import { queryBudget } from '../src/executor/index.js';
import type { QueryOptions, QueryResponse } from '../src/executor/result.js';
import { parse } from '../src/pql/index.js';
import { workerRead } from '../src/service/query-workers/offload.js';
import { QueryWorkers } from '../src/service/query-workers/pool.js';
import { runQuery } from '../src/service/query/index.js';
import { apply } from '../src/events/apply.js';
import { Holder } from '../src/state/holder.js';
import type { Publication } from '../src/state/published.js';
import { bitmapPool } from './lib/bitmaps.js';
import { closedLoop } from './lib/load.js';
import { parallelCeiling } from './lib/parallel-ceiling.js';
import { reportTimelines } from './lib/query-timeline.js';
import type { Reporter } from './lib/report.js';
import { type ThreadCpu, cpuPerRequest, threadCpu } from './lib/thread-cpu.js';

const SHARDS = 256;
const PQL = parse('Count(Intersect(Row(f=1), Row(f=2)))');
const OPTS: QueryOptions = { columnAttrs: false, excludeColumns: false, excludeRowAttrs: false };
const MS = Number(process.env.BENCH_QUERY_MS ?? 3000);
const NO_WRITES: EventSink = {
  emit: () => {
    throw new Error('a read query emitted an event');
  },
};

export async function runQueryWorkersExec(r: Reporter): Promise<void> {
  r.begin('query-workers-exec', 'query workers in-process: executor throughput (issue 25)');
  const holder = buildHolder();
  const feed = new FrozenFeed(holder);
  const expected = count(runQuery(holder, NO_WRITES, 'w', PQL, OPTS, LIMITS));
  const cpu0 = threadCpu(process.pid);
  const inThread = await closedLoop(1, MS, async () => check(runQuery(holder, NO_WRITES, 'w', PQL, OPTS, LIMITS)));
  r.figure(`request thread alone, q/s (load ${loadavg()[0].toFixed(2)})`, inThread.perSecond, 'q/s');
  cpuFigures(r, 'request thread alone', cpuPerRequest(cpu0, threadCpu(process.pid), inThread.requests));
  const rates = new Map<string, number>();
  for (const n of [1, 2]) {
    const pool = QueryWorkers.start(n, publisherOf(feed), pino({ level: 'silent' }));
    await pool.whenReady();
    // The figures say which way each variant runs: never alone because that was faster lately.
    pool.adaptShare = false;
    try {
      // With two workers and one query in flight: the request thread's share (here-share.ts), and
      // the workers alone (as before it, and as under concurrent queries).
      const variants = n === 2 ? [1, 1, 4] : [1, 4];
      for (const [i, inFlight] of variants.entries()) {
        const alone = n === 2 && i === 1;
        pool.shareHere = !alone;
        const label = `${n} worker${n > 1 ? 's' : ''}${alone ? ' alone' : ''}, ${inFlight} in flight`;
        const shared = n === 2 && !alone && inFlight === 1;
        const before = threadCpu(process.pid);
        const res = await closedLoop(inFlight, MS, async () => {
          const answer = workerRead(pool, holder, 'w', PQL, OPTS, queryBudget(0));
          if (answer === undefined) throw new Error('the query was not spread');
          check(await answer);
        });
        if (shared) {
          // Its timeline, in a run of its own: the marks cost a little.
          pool.timelines = [];
          await closedLoop(1, Math.min(MS, 2000), async () => {
            const answer = workerRead(pool, holder, 'w', PQL, OPTS, queryBudget(0));
            check(await answer);
            pool.timelines?.at(-1)?.mark('resolved');
          });
          reportTimelines(r, label, pool.timelines);
          pool.timelines = undefined;
        }
        rates.set(`${n}/${inFlight}${alone ? '/alone' : ''}`, res.perSecond);
        r.figure(`${label}, q/s (load ${loadavg()[0].toFixed(2)})`, res.perSecond, 'q/s');
        cpuFigures(r, label, cpuPerRequest(before, threadCpu(process.pid), res.requests));
      }
    } finally {
      await pool.close();
    }
  }
  r.figure('2 workers / request thread alone, 4 in flight', (rates.get('2/4') ?? 0) / inThread.perSecond, '×');
  r.figure('2 workers / 1 worker, 4 in flight', (rates.get('2/4') ?? 0) / (rates.get('1/4') ?? 1), '×');
  r.figure('2 workers / request thread alone, 1 in flight', (rates.get('2/1') ?? 0) / inThread.perSecond, '×');
  r.figure(
    '2 workers alone / request thread alone, 1 in flight',
    (rates.get('2/1/alone') ?? 0) / inThread.perSecond,
    '×',
  );
  // The substrate's own ceiling for any split over two threads (bench/lib/parallel-ceiling.ts).
  const ceiling = await parallelCeiling();
  r.figure(
    `raw andCardinality of the 256 shards, one thread (load ${loadavg()[0].toFixed(2)})`,
    ceiling.oneThreadMs,
    'ms',
  );
  r.figure('  … two threads at once, each over half (its own copy)', ceiling.twoThreadsMs, 'ms');
  r.figure('  … raw two threads / one: the ceiling of any 2-thread split here', ceiling.speedup, '×');
  r.figure(
    'one Set on a 10% row written again and again (a patch), µs',
    publishCost(holder, feed, () => 3),
    'µs',
  );
  r.figure(
    'one Set on a 10% row, spread over 256 rows (patches, re-frozen past the budget), µs',
    publishCost(holder, feed, (i) => i % SHARDS),
    'µs',
  );
  r.figure('one message round trip to a thread (ownership per write), µs', await roundTrip(), 'µs');

  function check(resp: QueryResponse): void {
    if (count(resp) !== expected) throw new Error(`answered ${count(resp)}, expected ${expected}`);
  }
}

/**
 * CPU ms a query took on the request thread and on the others (the workers; V8's helpers):
 * load-independent where q/s is not (under load the process gets its session's share of the
 * cores, however many threads it runs).
 */
function cpuFigures(r: Reporter, label: string, c: ThreadCpu): void {
  r.figure(`  CPU ms/q, ${label}: request thread`, c.main, 'ms');
  r.figure(`  CPU ms/q, ${label}: other threads`, c.others, 'ms');
}

function count(resp: QueryResponse): number {
  const res = resp.results[0];
  if (res?.type !== 'count') throw new Error(`not a count: ${JSON.stringify(res)}`);
  return res.n;
}

/** The whole state first, then whatever the feed captured, as the engine hands it once durable. */
function publisherOf(feed: FrozenFeed): StatePublisher {
  return {
    enabled: true,
    enable: (): Publication => feed.enable(),
    durable: (): Publication[] => feed.takeDurable(Number.MAX_SAFE_INTEGER),
    get handedOut(): boolean {
      return feed.handedOut;
    },
  };
}

/** Index w: rows 1 and 2 of f at 10% in each of 256 shards (from a pool of 6 bitmaps). */
function buildHolder(): Holder {
  const pool = bitmapPool(0.1, 6);
  const h = new Holder();
  apply(h, { type: 'IndexCreated', index: 'w', options: { keys: false, trackExistence: false } });
  apply(h, { type: 'FieldCreated', index: 'w', field: 'f', options: defaultFieldOptions('set') });
  for (let s = 0; s < SHARDS; s++)
    apply(h, {
      type: 'BitsSet',
      index: 'w',
      field: 'f',
      view: 'standard',
      shard: s,
      rows: [1, 2],
      columns: [pool[s % 6].clone(), pool[(s + 1) % 6].clone()],
    });
  return h;
}

/** µs per Set of one bit in a 10% row of shard shardOf(i), with the capture the publication makes. */
function publishCost(h: Holder, feed: FrozenFeed, shardOf: (i: number) => number): number {
  const n = 2000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    apply(h, {
      type: 'BitsSet',
      index: 'w',
      field: 'f',
      view: 'standard',
      shard: shardOf(i),
      rows: [1],
      columns: [Uint32Array.of((i * 7919) % 1_048_576)],
    });
    h.appliedSeq++;
    feed.capture(h.appliedSeq);
  }
  const us = ((performance.now() - t0) * 1000) / n;
  feed.takeDurable(h.appliedSeq);
  return us;
}

/** µs of one postMessage round trip of a small event to a worker thread that echoes it. */
async function roundTrip(): Promise<number> {
  const echo = new Worker(
    "const { parentPort } = require('node:worker_threads'); parentPort.on('message', (m) => parentPort.postMessage(m));",
    { eval: true },
  );
  const n = 5000;
  const event = {
    type: 'BitsSet',
    index: 'w',
    field: 'f',
    view: 'standard',
    shard: 3,
    rows: [1],
    columns: [Uint32Array.of(5)],
  };
  const t0 = performance.now();
  for (let i = 0; i < n; i++)
    await new Promise<void>((resolve) => {
      echo.once('message', () => resolve());
      echo.postMessage(event);
    });
  const us = ((performance.now() - t0) * 1000) / n;
  await echo.terminate();
  return us;
}
