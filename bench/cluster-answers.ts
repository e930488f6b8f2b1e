// Issue 23 in cluster mode: a Row() of several million columns spread over shards held by three
// members (R=1, 16 partitions) asked at one node, which fans it out, merges the members' partials
// and writes the answer. A loop of GET /status at that node measures its latency meanwhile, and
// every node reports its longest event-loop stall (loop-stall-preload.ts): the coordinator's
// (parse and merge of the partials, the write) and the members' (their partials' encoding).
// Targets: those of the one-node bench (big-answers): /status p99 ≤ 100 ms, max ≤ 250 ms.
import { request } from 'node:http';
import { acquireKafka } from '../test/helpers/kafka-broker.js';
import { startCluster, stopCluster } from './cluster.js';
import { HttpClient } from './lib/http-client.js';
import { loadFullRow } from './lib/pilosa.js';
import type { Reporter } from './lib/report.js';
import { now, percentile } from './lib/stats.js';

const SHARDS = Number(process.env.BENCH_CLUSTER_ANSWER_SHARDS ?? 8);
const ANSWERS = Number(process.env.BENCH_CLUSTER_ANSWERS ?? 3);
const P99 = { op: '<=' as const, value: 100, source: 'issue 23: /status p99 ≤ 100 ms beside big answers' };
const MAX = { op: '<=' as const, value: 250, source: 'issue 23: /status max ≤ 250 ms beside big answers' };

export async function runClusterAnswers(r: Reporter): Promise<void> {
  r.begin('cluster-answers', '/status at a coordinator merging big Row() answers from three members (issue 23)');
  let kafka: Awaited<ReturnType<typeof acquireKafka>>;
  try {
    kafka = await acquireKafka();
  } catch (err) {
    r.note(`skipped: no Kafka broker (${(err as Error).message.split('\n')[0]})`);
    return;
  }
  try {
    const c = await startCluster(kafka.brokers, 3, 16, 'cluster-answers', true);
    try {
      await load(c.nodes[0].url);
      for (const n of c.nodes) await n.loopStall(); // from here on
      const b = await beside(c.nodes[0].url);
      const stalls = await Promise.all(c.nodes.map((n) => n.loopStall()));
      r.note(
        `${ANSWERS} × Row(g=1) at node 0 one after another (${SHARDS * 1_048_576} columns over ${SHARDS} shards, ${(b.bytes / 1e6).toFixed(0)} MB of JSON each): ${(b.ms / 1000).toFixed(1)} s`,
      );
      r.figure(`/status p50 at the coordinator`, percentile(b.status, 50), 'ms');
      r.figure(`/status p99 at the coordinator (${b.status.length} requests)`, percentile(b.status, 99), 'ms', P99);
      r.figure(`/status max at the coordinator`, Math.max(...b.status), 'ms', MAX);
      for (const [i, s] of stalls.entries()) {
        const who = i === 0 ? 'coordinator' : `member ${i}`;
        r.figure(`${who}: longest event-loop stall (wall)`, s.maxMs, 'ms');
        r.figure(`${who}: most main-thread CPU between two loop turns`, s.maxCpuMs, 'ms');
      }
    } finally {
      await stopCluster(c, kafka.brokers);
    }
  } finally {
    await kafka.release();
  }
}

/** Row 1 of field g: every column of shards 0..SHARDS-1. */
async function load(url: string): Promise<void> {
  const setup = new HttpClient(url);
  try {
    await loadFullRow(setup, 'i', 'g', SHARDS);
  } finally {
    setup.close();
  }
}

/** The answers one after another while a loop times GET /status at the same node. */
async function beside(url: string): Promise<{ ms: number; bytes: number; status: number[] }> {
  const probe = new HttpClient(url);
  const status: number[] = [];
  let done = false;
  const t0 = now();
  const work = (async () => {
    let bytes = 0;
    for (let i = 0; i < ANSWERS; i++) bytes = await fetchCounting(url);
    return bytes;
  })().finally(() => (done = true));
  const loop = (async () => {
    while (!done) {
      const t = now();
      await probe.ok('GET', '/status');
      status.push(now() - t);
    }
  })();
  const bytes = await work;
  const ms = now() - t0;
  await loop;
  probe.close();
  return { ms, bytes, status };
}

/** POSTs Row(g=1) and counts the answer's bytes; its size must be that of every column. */
function fetchCounting(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/index/i/query`,
      { method: 'POST', headers: { 'content-type': 'text/plain' }, agent: false },
      (res) => {
        let bytes = 0;
        let head = '';
        res.on('data', (d: Buffer) => {
          bytes += d.length;
          if (head.length < 300) head += d.toString('utf8', 0, 300);
        });
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(bytes)
            : reject(new Error(`Row(g=1) answered ${res.statusCode}: ${head.slice(0, 300)}`)),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end('Row(g=1)');
  });
}
