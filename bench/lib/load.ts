// Closed-loop load: `clients` concurrent loops, each issuing its next request when the previous
// one answers, for a fixed duration. Reports throughput and latency percentiles.
import { now, percentile } from './stats.js';

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** `op(i)` gets a globally unique request number; the first failure aborts the whole run. */
export async function closedLoop(
  clients: number,
  durationMs: number,
  op: (i: number) => Promise<void>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  let failure: unknown;
  const start = now();
  const deadline = start + durationMs;
  const loop = async (): Promise<void> => {
    while (failure === undefined && now() < deadline) {
      const t0 = now();
      try {
        await op(next++);
      } catch (err) {
        failure ??= err;
        return;
      }
      latencies.push(now() - t0);
    }
  };
  await Promise.all(Array.from({ length: clients }, loop));
  if (failure !== undefined) throw failure;
  const seconds = (now() - start) / 1000;
  return {
    requests: latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}
