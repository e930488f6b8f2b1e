// Issue 21: what an idle cluster node costs. Three nodes, R=2, 16 partitions, settled, then left
// alone: each node's CPU ms a second from /proc over IDLE_MS (member probes, the Kafka consumers'
// fetches and heartbeats, the read-end keeper, timers). Printed, not asserted: on this shared
// 2-core machine every cluster bench beside an idle cluster pays for it.
// Run alone: KAFKA_BROKERS=… npx tsx bench/cluster-idle.ts (prints the figures; BENCH_CPU_PROF=DIR
// adds --cpu-prof to each node, bench/lib/server-child.ts).
import { loadavg } from 'node:os';
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
  } finally {
    await stopCluster(cluster, brokers);
  }
}
