// `npm run bench [-- filter…]`: runs every benchmark (or those whose name contains a filter) one
// after another, then prints the summary table. Benches are imported lazily, so one whose code
// does not load yet (or fails) is reported and the others still run.
import { cpus, loadavg } from 'node:os';
// Before any bench loads kafkajs (test/helpers/kafka-broker.ts imports it): the corrected
// read-committed filter must be in its module cache first (src/kafka/kafkajs.ts).
import { kafkajs } from '../src/kafka/kafkajs.js';
import { Reporter } from './lib/report.js';

kafkajs();

interface Bench {
  name: string;
  run: () => Promise<(r: Reporter) => Promise<void>>;
}

const BENCHES: Bench[] = [
  { name: 'durable-set', run: async () => (await import('./durable-set.js')).runDurableSet },
  { name: 'replay', run: async () => (await import('./log-replay.js')).runLogReplay },
  { name: 'import', run: async () => (await import('./import.js')).runImport },
  { name: 'query-exec', run: async () => (await import('./query-exec.js')).runQueryExec },
  { name: 'query-http', run: async () => (await import('./query-http.js')).runQueryHttp },
  { name: 'query-workers', run: async () => (await import('./query-workers.js')).runQueryWorkers },
  {
    name: 'query-workers-exec',
    run: async () => (await import('./query-workers-exec.js')).runQueryWorkersExec,
  },
  { name: 'http', run: async () => (await import('./http-wrk.js')).runHttpWrk },
  { name: 'query-bounds', run: async () => (await import('./query-bounds.js')).runQueryBounds },
  { name: 'big-answers', run: async () => (await import('./big-answers.js')).runBigAnswers },
  // Also run at the end of query-http; listed alone so it can be run by itself.
  { name: 'access-log', run: async () => (await import('./access-log-cost.js')).runAccessLogCost },
  { name: 'cli-import', run: async () => (await import('./cli-import.js')).runCliImport },
  { name: 'kafka', run: async () => (await import('./kafka-bench.js')).runKafkaBench },
  { name: 'history', run: async () => (await import('./history-bench.js')).runHistoryBench },
  { name: 'scale', run: async () => (await import('./scale.js')).runScale },
  { name: 'cluster', run: async () => (await import('./cluster.js')).runClusterBench },
  { name: 'cluster-answers', run: async () => (await import('./cluster-answers.js')).runClusterAnswers },
  { name: 'cluster-ingest', run: async () => (await import('./cluster-ingest.js')).runClusterIngestBench },
];

async function main(filters: string[]): Promise<number> {
  // A filter that is a bench's whole name picks that one only (`http`, not also `query-http`).
  const exact = BENCHES.filter((b) => filters.includes(b.name));
  const chosen =
    exact.length > 0 ? exact : BENCHES.filter((b) => filters.length === 0 || filters.some((f) => b.name.includes(f)));
  if (chosen.length === 0) {
    console.error(`no benchmark matches ${filters.join(', ')}; known: ${BENCHES.map((b) => b.name).join(', ')}`);
    return 2;
  }
  const r = new Reporter();
  const load = (): string =>
    loadavg()
      .map((x) => x.toFixed(1))
      .join(' ');
  console.log(
    `bitledger bench: ${chosen.map((b) => b.name).join(', ')}; node ${process.version}, ${cpus().length} cores, load average ${load()}`,
  );
  const started = performance.now();
  let failed = 0;
  for (const b of chosen) {
    const t0 = performance.now();
    try {
      await (await b.run())(r);
    } catch (err) {
      failed++;
      r.note(`${b.name} FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
    console.log(`  (${b.name}: ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
  r.summary();
  console.log(
    `\n  total ${((performance.now() - started) / 1000).toFixed(0)} s; load average now ${load()} (other work on this machine skews figures)`,
  );
  if (failed > 0) console.log(`  ${failed} benchmark(s) failed: see the notes above`);
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
