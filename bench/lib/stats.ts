// Small timing and statistics helpers shared by the benches.

export const now = (): number => performance.now();

/** Percentile (0–100) of values, nearest-rank; sorts a copy. */
export function percentile(values: ArrayLike<number>, p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** Mean ms per call of fn, repeated for at least minMs (and at least minRuns times). */
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

/**
 * Compares alternatives on a busy machine: after a warm-up, `rounds` rounds each time every
 * alternative in turn (interleaved, so all see the same background load) and the best round of
 * each is kept. Returns mean ms per call by name.
 */
export async function bestOfRounds<K extends string>(
  fns: Record<K, () => unknown>,
  rounds = 15,
  roundMs = 40,
): Promise<Record<K, number>> {
  const names = Object.keys(fns) as K[];
  const best = {} as Record<K, number>;
  for (const k of names) {
    await timeRepeated(fns[k], 20, 3); // warm-up: JIT and caches
    best[k] = Infinity;
  }
  for (let i = 0; i < rounds; i++) {
    for (const k of names) best[k] = Math.min(best[k], await timeRepeated(fns[k], roundMs, 3));
  }
  return best;
}

export const MB = 1024 * 1024;
