// Hook for the Kafka benchmark written elsewhere: bench/kafka-bench.ts exporting
// runKafkaBench(reporter). Loaded by a computed specifier so this compiles while it is absent.
import { existsSync } from 'node:fs';
import type { Reporter } from './lib/report.js';

type KafkaBench = (r: Reporter) => Promise<void>;

export async function runKafkaHook(r: Reporter): Promise<void> {
  r.begin('kafka');
  if (!existsSync(new URL('./kafka-bench.ts', import.meta.url))) {
    r.note('skipped: bench/kafka-bench.ts is absent');
    return;
  }
  const spec = './kafka-bench.js';
  const mod = (await import(spec)) as Record<string, unknown>;
  const run = mod.runKafkaBench;
  if (typeof run !== 'function') {
    r.note('skipped: bench/kafka-bench.ts does not export runKafkaBench');
    return;
  }
  await (run as KafkaBench)(r);
}
