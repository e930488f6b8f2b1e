// Issue 21: what an idle cluster node costs. Three nodes, R=2, 16 partitions, settled, then left
// alone: each node's CPU ms a second from /proc over IDLE_MS (member probes, the Kafka consumers'
// fetches and heartbeats, the read-end keeper, timers). Printed, not asserted: on this shared
// 2-core machine every cluster bench beside an idle cluster pays for it.
// Run alone: KAFKA_BROKERS=… npx tsx bench/cluster-idle.ts (prints the figures; BENCH_CPU_PROF=DIR
// adds --cpu-prof to each node, bench/lib/server-child.ts).
import { loadavg } from 'node:os';
import { HttpClient } from './lib/http-client.js';
import { closedLoop } from './lib/load.js';
import { createField, createIndex, query } from './lib/pilosa.js';
import { processCpuSeconds } from './lib/process-cpu.js';
import type { Reporter } from './lib/report.js';
import { startCluster, stopCluster, type Cluster } from './cluster.js';

const IDLE_MS = Number(process.env.BENCH_CLUSTER_IDLE_MS ?? 10_000);
/** After the map settles, the nodes' start-up work (catch-up, group joins) ends before the measure. */
const SETTLE_MS = 3000;

/** Each node's CPU ms a second over `ms` of doing nothing. */
export async function idleCpuPerNode(cluster: Cluster, ms = IDLE_MS): Promise<number[]> {
  const cpu = (pid: number): number => (processCpuSeconds(pid) ?? Number.NaN) * 1000;
  const before = cluster.nodes.map((n) => cpu(n.pid));
  const t0 = performance.now();
  await new Promise((res) => setTimeout(res, ms));
  const seconds = (performance.now() - t0) / 1000;
  return cluster.nodes.map((n, i) => (cpu(n.pid) - before[i]) / seconds);
}

export async function idleFigures(r: Reporter, brokers: string[]): Promise<void> {
  const cluster = await startCluster(brokers, 3, 16, 'cluster-idle', false, 2);
  try {
    await new Promise((res) => setTimeout(res, SETTLE_MS));
    const perNode = await idleCpuPerNode(cluster);
    r.figure(
      'idle CPU ms/s per cluster node (3 nodes, R=2, mean)',
      perNode.reduce((a, b) => a + b, 0) / perNode.length,
      'ms/s',
    );
    r.note(
      `idle CPU ms/s by node: ${perNode.map((x) => x.toFixed(1)).join(', ')} over ${IDLE_MS} ms; load average ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    await stopCluster(cluster, brokers);
  }
}

/**
 * One connection of Count(Row) queries at node 0 for QUERY_MS (BENCH_CLUSTER_IDLE_QUERY=1, run
 * alone): req/s, p50, each node's CPU per query, and the read-end refreshes a second at node 0
 * (the keeper, reads/cluster-ends.ts) — what the cluster costs while queries come one at a time.
 */
async function oneConnection(cluster: Cluster): Promise<string> {
  const url = cluster.nodes[0].url;
  const setup = new HttpClient(url);
  await createIndex(setup, 'q');
  await createField(setup, 'q', 'f');
  for (let s = 0; s < 16; s++) await query(setup, 'q', `Set(${s * 2 ** 20 + 1}, f=1)`);
  setup.close();
  const refreshes = async (): Promise<[number, number]> => {
    const body = (await (await fetch(`${url}/cluster`)).json()) as {
      node?: { readEndsRefreshes?: unknown; readEndsRounds?: unknown };
    };
    return [Number(body.node?.readEndsRounds ?? 0), Number(body.node?.readEndsRefreshes ?? 0)];
  };
  const cpu = (pid: number): number => (processCpuSeconds(pid) ?? Number.NaN) * 1000;
  const http = new HttpClient(url, 1);
  const r0 = await refreshes();
  const c0 = cluster.nodes.map((n) => cpu(n.pid));
  const res = await closedLoop(1, QUERY_MS, () =>
    http.ok('POST', '/index/q/query', 'Count(Row(f=1))', 'text/plain').then(() => undefined),
  );
  const perQuery = cluster.nodes.map((n, i) => (cpu(n.pid) - c0[i]) / res.requests);
  const r1 = await refreshes();
  http.close();
  return `1 connection: ${res.perSecond.toFixed(0)} req/s, p50 ${res.p50Ms.toFixed(2)} ms, CPU ms/query by node ${perQuery.map((x) => x.toFixed(2)).join(', ')}, read-end rounds at node 0 ${((r1[0] - r0[0]) / (QUERY_MS / 1000)).toFixed(0)}/s, queries that waited for one ${((r1[1] - r0[1]) / res.requests).toFixed(3)}`;
}

const QUERY_MS = 4000;

// Run alone (tsx): print the figures without the rest of the cluster bench.
if (process.argv[1]?.endsWith('cluster-idle.ts')) {
  const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:19092').split(',');
  const rounds = Number(process.env.BENCH_CLUSTER_IDLE_ROUNDS ?? 1);
  const cluster = await startCluster(brokers, 3, 16, 'cluster-idle', false, 2);
  try {
    await new Promise((res) => setTimeout(res, SETTLE_MS));
    for (let i = 0; i < rounds; i++) {
      const perNode = await idleCpuPerNode(cluster);
      console.log(
        `idle CPU ms/s per node: ${perNode.map((x) => x.toFixed(1)).join(', ')}; load ${loadavg()
          .map((x) => x.toFixed(2))
          .join(' ')}`,
      );
    }
    if (process.env.BENCH_CLUSTER_IDLE_QUERY === '1')
      console.log(`${await oneConnection(cluster)}; load ${loadavg()[0].toFixed(2)}`);
  } finally {
    await stopCluster(cluster, brokers);
  }
}
