// Issue 25: query work on worker threads. The same index (256 shards, rows 1 and 2 of f at
// 10%) in two server children, one with the default number of query workers (one per core) and
// one with --query-workers 1; Count(Intersect) req/s under wrk at 1 and 16 connections, each
// server in turn, the two interleaved over rounds (best of each kept: the machine is shared).
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import { encodeImportRoaringRequest } from '../src/encoding/public-proto.js';
import { encodePilosaRoaring } from '../src/roaring/pilosa-roaring.js';
import { bitmapPool } from './lib/bitmaps.js';
import { parallelCeiling } from './lib/parallel-ceiling.js';
import { httpTimeline } from './query-workers-timeline.js';
import { HttpClient } from './lib/http-client.js';
import { createField, createIndex, importRoaring, query } from './lib/pilosa.js';
import type { Reporter } from './lib/report.js';
import { type ChildServer, startChildServer, tempDir } from './lib/server-child.js';
import { type ThreadCpu, cpuPerRequest, threadCpu } from './lib/thread-cpu.js';

const run = promisify(execFile);
const PQL = 'Count(Intersect(Row(f=1), Row(f=2)))';
const SECONDS = Number(process.env.BENCH_WORKERS_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_WORKERS_ROUNDS ?? 2);

export async function runQueryWorkers(r: Reporter): Promise<void> {
  r.begin('query-workers', 'query workers over HTTP (issue 25)');
  const servers: [string, ChildServer][] = [];
  try {
    // One worker per core (--query-workers 0) against the request thread alone.
    servers.push([
      'default',
      await startChildServer({ label: 'workers-per-core', fsync: 'always', extraArgs: ['--query-workers', '0'] }),
    ]);
    servers.push([
      '1 worker',
      await startChildServer({ label: 'workers-1', fsync: 'always', extraArgs: ['--query-workers', '1'] }),
    ]);
    const bodies = importBodies();
    let expected: number | undefined;
    for (const [, s] of servers) {
      const n = await load(s.url, bodies);
      if (expected !== undefined && n !== expected) throw new Error(`the servers answer ${expected} and ${n}`);
      expected = n;
    }
    const script = luaScript();
    // The raw two-thread speed-up of the shards' intersections, measured between the rounds:
    // what any split of a query over two threads can reach in these minutes (lib/parallel-ceiling.ts).
    const ceilings: number[] = [];
    const perReq = new Map<string, ThreadCpu>();
    for (const conns of [1, 16]) {
      const best = new Map<string, number>();
      const p50 = new Map<string, number>();
      const cpu = new Map<string, ThreadCpu & { requests: number }>();
      let shared = 0;
      let defaultRequests = 0;
      for (let round = 0; round < ROUNDS; round++) {
        ceilings.push((await parallelCeiling(50)).speedup);
        for (const [name, s] of servers) {
          const before = threadCpu(s.pid);
          const phases = name === 'default' ? await sharedPhases(s.url) : 0;
          const res = await wrk(s.url, conns, script);
          const used = cpuPerRequest(before, threadCpu(s.pid), 1);
          if (name === 'default') {
            shared += (await sharedPhases(s.url)) - phases;
            defaultRequests += res.requests;
          }
          const sum = cpu.get(name) ?? { main: 0, others: 0, requests: 0 };
          cpu.set(name, {
            main: sum.main + used.main,
            others: sum.others + used.others,
            requests: sum.requests + res.requests,
          });
          best.set(name, Math.max(best.get(name) ?? 0, res.perSecond));
          p50.set(name, Math.min(p50.get(name) ?? Number.POSITIVE_INFINITY, res.p50Ms));
        }
      }
      const def = best.get('default') ?? 0;
      const one = best.get('1 worker') ?? 0;
      const load1 = loadavg()[0].toFixed(2);
      r.figure(`Count(Intersect) req/s, ${conns} conn, one per core (load ${load1})`, def, 'req/s');
      r.figure(`Count(Intersect) req/s, ${conns} conn, --query-workers 1`, one, 'req/s');
      r.figure(`  … one per core / 1 worker, ${conns} conn`, def / one, '×', {
        op: '>=',
        value: conns === 1 ? 1.6 : 1.3,
        source: 'issue 25',
      });
      // Under load the mean rate follows the process's descheduled stretches; the median request less so.
      if (conns === 1)
        r.figure(
          `  median latency, 1 conn: 1 worker / one per core (${p50.get('1 worker')?.toFixed(2)} / ${p50.get('default')?.toFixed(2)} ms)`,
          (p50.get('1 worker') ?? 0) / (p50.get('default') ?? 1),
          '×',
        );
      // ShareGain (here-share.ts) runs a read shared or on the request thread alone: the CPU split follows.
      r.figure(
        `  reads shared with a worker, ${conns} conn, one per core`,
        shared / Math.max(1, defaultRequests),
        'of reads',
      );
      for (const [name] of servers) {
        const c = cpu.get(name);
        cpuFigures(r, `${conns} conn, ${name === 'default' ? 'one per core' : '1 worker'}`, c);
        if (c !== undefined) perReq.set(`${name}/${conns}`, perRequest(c));
      }
    }
    boundFigures(r, ceilings, perReq);
    await httpTimeline(
      r,
      (url) => load(url, bodies),
      (url, conns) => wrk(url, conns, script),
    );
  } finally {
    for (const [, s] of servers) await s.dispose();
  }
}

/** Rows 1 and 2 of a shard at 10%, from a pool of 4 bitmaps: one import body per pool entry. */
function importBodies(): Uint8Array[] {
  const pool = bitmapPool(0.1, 4);
  return pool.map((b, k) =>
    encodeImportRoaringRequest({
      clear: false,
      views: [
        {
          name: '',
          data: encodePilosaRoaring(
            new Map([
              [1, b],
              [2, pool[(k + 1) % 4]],
            ]),
          ),
        },
      ],
    }),
  );
}

/** Index w: 256 shards of `bodies`; answers the count. */
async function load(url: string, bodies: Uint8Array[]): Promise<number> {
  const c = new HttpClient(url);
  try {
    await createIndex(c, 'w');
    await createField(c, 'w', 'f');
    for (let s = 0; s < 256; s++) await importRoaring(c, 'w', 'f', s, bodies[s % 4]);
    const res = await query(c, 'w', PQL);
    const n = res.results[0];
    if (typeof n !== 'number' || n <= 0) throw new Error(`${PQL} answered ${JSON.stringify(res)}`);
    return n;
  } finally {
    c.close();
  }
}

/**
 * CPU ms a request took on the request thread and on the other threads (workers, GC helpers):
 * what a loaded machine's rates hide. With autogroup scheduling a process gets its session's
 * share of the cores whatever its thread count, so under load two workers cannot run faster
 * than one; these figures show what each thread's part of a request costs.
 */
function cpuFigures(r: Reporter, label: string, c: (ThreadCpu & { requests: number }) | undefined): void {
  if (c === undefined) return;
  const n = Math.max(1, c.requests);
  r.figure(`  CPU ms/req, ${label}: request thread`, c.main / n, 'ms');
  r.figure(`  CPU ms/req, ${label}: other threads`, c.others / n, 'ms');
}

/** The server's shared query phases so far (/metrics). */
async function sharedPhases(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^bitledger_query_worker_shared_phases_total(?:\{[^}]*\})? (\d+)/m.exec(text);
  if (m === null) throw new Error('no bitledger_query_worker_shared_phases_total in /metrics');
  return Number(m[1]);
}

function perRequest(c: ThreadCpu & { requests: number }): ThreadCpu {
  const n = Math.max(1, c.requests);
  return { main: c.main / n, others: c.others / n };
}

/**
 * What bounds the 1-connection ratio here, from this run's figures: a request alone costs
 * `alone` ms of the request thread (--query-workers 1, 1 conn); of that, `serial` cannot be
 * split (HTTP, parse, compile, post, merge, answer: the request thread's cost at 16 conn, where
 * the workers take every shard); the rest, the shards, splits over two threads at best at the
 * raw ceiling. The best ratio is then alone / (serial + shards / ceiling), before any wake-up,
 * imbalance or the client's own CPU on the same two cores.
 */
function boundFigures(r: Reporter, ceilings: number[], perReq: Map<string, ThreadCpu>): void {
  const sorted = [...ceilings].sort((a, b) => a - b);
  const ceiling = sorted[sorted.length >> 1];
  r.figure(
    `raw two-thread ceiling, median of ${sorted.length} between rounds (min ${sorted[0]?.toFixed(2)}, max ${sorted.at(-1)?.toFixed(2)})`,
    ceiling,
    '×',
  );
  const alone = perReq.get('1 worker/1')?.main;
  const serial = perReq.get('default/16')?.main;
  if (alone === undefined || serial === undefined) return;
  r.figure('  request thread CPU ms/req alone (1 conn, --query-workers 1)', alone, 'ms');
  r.figure('  of which serial (the request thread at 16 conn, one per core)', serial, 'ms');
  r.figure(
    '  best 1-conn ratio at that ceiling: alone / (serial + shards / ceiling)',
    alone / (serial + (alone - serial) / ceiling),
    '×',
  );
  r.figure(
    '  ceiling the 1-conn target needs: shards / (alone / 1.6 − serial)',
    (alone - serial) / (alone / 1.6 - serial),
    '×',
  );
}

function luaScript(): string {
  const path = join(tempDir('wrk'), 'count.lua');
  writeFileSync(
    path,
    `wrk.method = "POST"\nwrk.body = ${JSON.stringify(PQL)}\nwrk.headers["Content-Type"] = "text/plain"\n`,
  );
  return path;
}

/** wrk's requests/s over SECONDS; a run with any non-2xx answer or socket error fails the bench. */
async function wrk(
  url: string,
  conns: number,
  script: string,
): Promise<{ perSecond: number; requests: number; p50Ms: number }> {
  const args = ['-t1', `-c${conns}`, `-d${SECONDS}s`, '--latency', '-s', script, `${url}/index/w/query`];
  const { stdout } = await run('wrk', args);
  if (/Non-2xx|Socket errors/.test(stdout)) throw new Error(`wrk saw errors:\n${stdout}`);
  const m = /Requests\/sec:\s+([\d.]+)/.exec(stdout);
  if (m === null) throw new Error(`no rate in wrk's output:\n${stdout}`);
  const total = /(\d+) requests in/.exec(stdout);
  return { perSecond: Number(m[1]), requests: total === null ? 0 : Number(total[1]), p50Ms: p50Of(stdout) };
}

/** wrk's median latency (its --latency distribution), in ms. */
function p50Of(stdout: string): number {
  const m = /^\s*50%\s+([\d.]+)(us|ms|s)\s*$/m.exec(stdout);
  if (m === null) throw new Error(`no median latency in wrk's output:\n${stdout}`);
  return Number(m[1]) * { us: 0.001, ms: 1, s: 1000 }[m[2] as 'us' | 'ms' | 's'];
}
