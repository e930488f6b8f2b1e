// TEMPORARY probe (h21apply): per-stage timings appended to a file named by H21_PROBE.
import { appendFileSync } from 'node:fs';
const file = process.env.H21_PROBE;
export const probeNow = (): number => performance.now();
export function probe(what: string, ms: number): void {
  if (file !== undefined) appendFileSync(file, `${process.pid} ${what} ${ms.toFixed(3)}\n`);
}
