// Issue 25, over HTTP: where a 1-connection Count(Intersect) request's wall time goes on a server
// with one query worker per core, read by read. The server runs in this process (its query
// pool's timelines are reachable; this process does nothing else while wrk runs): each request's
// arrival and answer (Node's request and finish events) beside its read's timeline (timeline.ts), matched in order
// (one connection: one request at a time, every read shared with the worker).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { loadavg } from 'node:os';
import { pino } from 'pino';
import { createServer } from '../src/app.js';
import { DEFAULTS } from '../src/config/config.js';
import { crossThreadMs } from '../src/util/clock.js';
import { reportTimelines } from './lib/query-timeline.js';
import type { Reporter } from './lib/report.js';
import { removeDir, tempDir } from './lib/server-child.js';
import { cpuPerRequest, threadCpu } from './lib/thread-cpu.js';

/** `load` fills the index at `url`; `wrk` runs the query at `conns` connections against it. */
export async function httpTimeline(
  r: Reporter,
  load: (url: string) => Promise<unknown>,
  wrk: (url: string, conns: number) => Promise<{ perSecond: number; requests: number }>,
): Promise<void> {
  const dir = tempDir('workers-timeline');
  const server = await createServer(
    { ...DEFAULTS, dataDir: dir, bind: '127.0.0.1:0', logLevel: 'silent', queryWorkers: 0, fsync: 'always' },
    pino({ level: 'silent' }),
    (err) => {
      throw err;
    },
  );
  const arrived: number[] = [];
  const answered: number[] = [];
  let tracing = false;
  // On Node's server, ahead of its handler: plain query POSTs are answered in front of fastify's
  // routing (http/lean-query.ts), so fastify's hooks would not see them.
  const onRequest = (_req: IncomingMessage, res: ServerResponse): void => {
    if (!tracing) return;
    arrived.push(crossThreadMs());
    res.once('finish', () => answered.push(crossThreadMs()));
  };
  server.app.server.prependListener('request', onRequest);
  try {
    const url = `http://127.0.0.1:${await server.listen()}`;
    await load(url);
    const pool = server.queryWorkers;
    if (pool === undefined) throw new Error('the server started no query workers');
    await pool.whenReady();
    // Every read shared (not alone because that was faster lately): the timelines match the requests.
    pool.adaptShare = false;
    await wrk(url, 1);
    pool.timelines = [];
    tracing = true;
    const before = threadCpu(process.pid);
    const res = await wrk(url, 1);
    const cpu = cpuPerRequest(before, threadCpu(process.pid), res.requests);
    tracing = false;
    const lines = pool.timelines;
    pool.timelines = undefined;
    const n = Math.min(lines.length, arrived.length, answered.length);
    if (n < res.requests * 0.9)
      throw new Error(`${n} timelines for ${res.requests} requests: not every read was shared`);
    const label = `HTTP 1 conn, shared (load ${loadavg()[0].toFixed(2)})`;
    r.figure(`${label}: req/s`, res.perSecond, 'req/s');
    r.figure(`${label}: CPU ms/req, request thread`, cpu.main, 'ms');
    r.figure(`${label}: CPU ms/req, other threads`, cpu.others, 'ms');
    const med = (f: (i: number) => number): number => {
      const xs = Array.from({ length: n }, (_, i) => f(i)).filter(Number.isFinite);
      xs.sort((a, b) => a - b);
      return xs[xs.length >> 1];
    };
    r.figure(`${label}: wall ms a request (1 / rate)`, 1000 / res.perSecond, 'ms');
    r.figure(
      `${label}: arrival to the read's begin (HTTP, route, PQL parse)`,
      med((i) => lines[i].at.begin - arrived[i]),
      'ms',
    );
    r.figure(
      `${label}: read finalized to the answer sent (serialize, records, write)`,
      med((i) => answered[i] - lines[i].at.finalized),
      'ms',
    );
    r.figure(
      `${label}: answer sent to the next arrival (client, loopback)`,
      med((i) => arrived[i + 1] - answered[i]),
      'ms',
    );
    // The moments in the reads themselves: the in-process bench's intervals.
    for (const t of lines) t.at.resolved = t.at.finalized;
    reportTimelines(r, label, lines.slice(0, n));
  } finally {
    await server.close();
    removeDir(dir);
  }
}
