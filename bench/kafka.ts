// Hook for the Kafka benchmark written elsewhere: bench/kafka-bench.ts exporting
// runKafkaBench(reporter), which opens its own section. Loaded by a computed specifier so this
// compiles while the file is absent.
import { existsSync } from 'node:fs';
import type { Reporter } from './lib/report.js';

type KafkaBench = (r: Reporter) => Promise<void>;

export async function runKafkaHook(r: Reporter): Promise<void> {
  // Under tsx the source is .ts; after `npm run build` the bench runs from dist/ as .js.
  if (!existsSync(new URL('./kafka-bench.ts', import.meta.url)) && !existsSync(new URL('./kafka-bench.js', import.meta.url))) {
    r.begin('kafka');
    r.note('skipped: bench/kafka-bench.ts is absent');
    return;
  }
  const spec = './kafka-bench.js';
  const mod = (await import(spec)) as Record<string, unknown>;
  const run = mod.runKafkaBench;
  if (typeof run !== 'function') {
    r.begin('kafka');
    r.note('skipped: bench/kafka-bench.ts does not export runKafkaBench');
    return;
  }
  await (run as KafkaBench)(r);
}
