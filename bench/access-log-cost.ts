// Issue 13: what the access log costs on the hottest query path. Three servers at --log-level
// info in one run: access log off, on with its default cap, and on with no cap (a line per
// request); the 16-client Count(Intersect) rate is measured in alternating rounds so that the
// machine's background load falls on all three alike. Target: the default costs ≤ 5%.
import { openSync } from 'node:fs';
import { pino } from 'pino';
import { DEFAULTS } from '../src/config/config.js';
import { AccessLog } from '../src/http/access-log.js';
import { HttpClient } from './lib/http-client.js';
import { closedLoop } from './lib/load.js';
import type { Reporter } from './lib/report.js';
import { type ChildServer, startChildServer } from './lib/server-child.js';
import { COUNT_PQL, loadSmallIndex } from './query-http.js';

const ROUND_MS = Number(process.env.BENCH_ACCESS_LOG_MS ?? 2000);
const ROUNDS = 3;

export async function runAccessLogCost(r: Reporter): Promise<void> {
  r.begin('access-log', 'access log on and off, Count(Intersect) over HTTP (issue 13)');
  const variants = [
    { name: 'off', args: ['--access-log-per-second', '0'] },
    { name: `on, cap ${DEFAULTS.accessLogPerSecond}/s (default)`, args: [] },
    { name: 'on, every request', args: ['--access-log-per-second', '1000000000'] },
  ];
  const servers: ChildServer[] = [];
  try {
    for (const v of variants) {
      const s = await startChildServer({
        label: `access-${servers.length}`,
        fsync: 'always',
        extraArgs: ['--log-level', 'info', ...v.args],
      });
      servers.push(s);
      const setup = new HttpClient(s.url);
      await loadSmallIndex(setup);
      setup.close();
    }
    const totals = variants.map(() => ({ requests: 0, seconds: 0 }));
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < servers.length; i++) {
        const http = new HttpClient(servers[i].url, 16);
        const res = await closedLoop(16, ROUND_MS, () =>
          http.ok('POST', '/index/q/query', COUNT_PQL, 'text/plain').then(() => undefined),
        );
        http.close();
        totals[i].requests += res.requests;
        totals[i].seconds += res.seconds;
      }
    }
    const rate = totals.map((t) => t.requests / t.seconds);
    variants.forEach((v, i) => r.figure(`Count(Intersect) req/s, 16 clients, access log ${v.name}`, rate[i], 'req/s'));
    r.figure('  default access log / off', rate[1] / rate[0], '×', {
      op: '>=',
      value: 0.95,
      source: 'issue 13: ≤ 5% cost',
    });
    r.figure('  a line per request / off', rate[2] / rate[0], '×');
    // The same cost without the machine's noise: one logged line, and one capped (counted) call,
    // timed in this process against /dev/null, as a share of a request's time at the "off" rate.
    const line = lineCostUs(1e9);
    const capped = lineCostUs(0);
    r.figure('  one access-log line (pino to /dev/null)', line, 'µs');
    r.figure('  one request over the cap (counted only)', capped, 'µs');
    r.figure('  a line per request, share of a request at the off rate', (line * rate[0]) / 1e6, '×');
  } finally {
    for (const s of servers) await s.dispose();
  }
}

/** Microseconds per AccessLog.record() with `perSecond` lines allowed (0 < cap: all counted). */
function lineCostUs(perSecond: number): number {
  const log = new AccessLog(
    pino({ level: 'info' }, pino.destination({ fd: openSync('/dev/null', 'w'), sync: true })),
    Math.max(perSecond, 1),
  );
  const n = 100_000;
  const entry = { reqId: 'abc-1', method: 'POST', url: '/index/q/query', status: 200, ms: 1.234, bytes: 16 };
  // Over the cap after the first line of each second: the capped path is what is timed then.
  const t0 = performance.now();
  for (let i = 0; i < n; i++) log.record(entry);
  return ((performance.now() - t0) * 1000) / n;
}
