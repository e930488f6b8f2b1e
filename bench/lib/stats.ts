// Small timing and statistics helpers shared by the benches.

export const now = (): number => performance.now();

/** Percentile (0–100) of values, nearest-rank; sorts a copy. */
export function percentile(values: ArrayLike<number>, p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/**
 * Runs fn repeatedly for at least minMs (and at least minRuns times) and returns the mean ms per
 * call: short operations need many repetitions before timer resolution stops mattering.
 */
export async function timeRepeated(fn: () => unknown, minMs = 300, minRuns = 3): Promise<number> {
  let runs = 0;
  const start = now();
  let elapsed = 0;
  while (runs < minRuns || elapsed < minMs) {
    await fn();
    runs++;
    elapsed = now() - start;
  }
  return elapsed / runs;
}

/** Wall time of one call in ms, with its result. */
export async function timed<T>(fn: () => Promise<T> | T): Promise<{ ms: number; value: T }> {
  const start = now();
  const value = await fn();
  return { ms: now() - start, value };
}

export const MB = 1024 * 1024;
