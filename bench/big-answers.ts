// Issue 23: answers written in slices. A loop of GET /status measures latency (target p99 ≤ 100 ms,
// max ≤ 250 ms) while three clients each fetch one Row() of 10,485,760 columns as JSON (about
// 83 MB each) at once, and the same for protobuf. Before, one such answer held /status 1.8 s.
import { request } from 'node:http';
import { HttpClient } from './lib/http-client.js';
import { loadFullRow } from './lib/pilosa.js';
import type { Reporter } from './lib/report.js';
import { startChildServer } from './lib/server-child.js';
import { now, percentile } from './lib/stats.js';

const SHARDS = 10;
const ANSWERS = 3;
const P99 = { op: '<=' as const, value: 100, source: 'issue 23: /status p99 ≤ 100 ms beside three 10M-column answers' };
const MAX = { op: '<=' as const, value: 250, source: 'issue 23: /status max ≤ 250 ms beside three 10M-column answers' };

export async function runBigAnswers(r: Reporter): Promise<void> {
  r.begin('big-answers', '/status beside three 10M-column answers written in slices (issue 23)');
  const server = await startChildServer({ label: 'answers', fsync: 'always', loopStall: true });
  const setup = new HttpClient(server.url);
  try {
    await loadFullRow(setup, 'i', 'g', SHARDS);
    for (const [format, accept] of [
      ['JSON', 'application/json'],
      ['protobuf', 'application/x-protobuf'],
    ] as const) {
      await server.loopStall(); // from here on
      const b = await beside(server.url, accept);
      const stall = await server.loopStall();
      r.note(
        `${ANSWERS} × Row(g=1) as ${format} (${SHARDS * 1_048_576} columns, ${(b.bytes / 1e6).toFixed(0)} MB each): all written after ${(b.ms / 1000).toFixed(1)} s`,
      );
      r.figure(`/status p50 during three ${format} answers`, percentile(b.status, 50), 'ms');
      r.figure(
        `/status p99 during three ${format} answers (${b.status.length} requests)`,
        percentile(b.status, 99),
        'ms',
        P99,
      );
      r.figure(`/status max during three ${format} answers`, Math.max(...b.status), 'ms', MAX);
      // The server's own longest synchronous step or GC pause: what load on the machine adds to
      // the client's figures is not in it.
      r.figure(`server event loop: longest stall during three ${format} answers (wall)`, stall.maxMs, 'ms');
      r.figure(`server main thread: most CPU between two loop turns, three ${format} answers`, stall.maxCpuMs, 'ms');
    }
  } finally {
    setup.close();
    await server.dispose();
  }
}

/** Fetches three big answers at once while a loop times GET /status. */
async function beside(url: string, accept: string): Promise<{ ms: number; bytes: number; status: number[] }> {
  const probe = new HttpClient(url);
  const status: number[] = [];
  let done = false;
  const t0 = now();
  const work = Promise.all(Array.from({ length: ANSWERS }, () => fetchCounting(url, accept))).finally(
    () => (done = true),
  );
  const loop = (async () => {
    while (!done) {
      const t = now();
      await probe.ok('GET', '/status');
      status.push(now() - t);
    }
  })();
  const sizes = await work;
  const ms = now() - t0;
  await loop;
  probe.close();
  return { ms, bytes: sizes[0], status };
}

/** POSTs Row(g=1) and reads the answer as it comes, counting its bytes (a client that keeps up). */
function fetchCounting(url: string, accept: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/index/i/query`,
      { method: 'POST', headers: { accept, 'content-type': 'text/plain' }, agent: false },
      (res) => {
        let bytes = 0;
        res.on('data', (d: Buffer) => {
          bytes += d.length;
        });
        res.on('end', () =>
          res.statusCode === 200 ? resolve(bytes) : reject(new Error(`Row(g=1) answered ${res.statusCode}`)),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end('Row(g=1)');
  });
}
