// Loaded into a bench's server child (node --expose-gc --import …/gc-hook.js), so the bench can
// read the server's own resident memory after a full collection, with no route or flag in the
// server for it: on SIGUSR2 the process collects a few times, pausing between (native bitmaps
// are freed by finalizers that run after the collection that found them dead), then writes its
// process.memoryUsage() as JSON to the file named by BENCH_GC_RSS_FILE (whole: written aside,
// then renamed).
import { renameSync, writeFileSync } from 'node:fs';

const gc = (globalThis as { gc?: () => void }).gc;
const file = process.env.BENCH_GC_RSS_FILE;

if (gc !== undefined && file !== undefined)
  process.on('SIGUSR2', () => {
    void (async () => {
      for (let i = 0; i < 5; i++) {
        gc();
        await new Promise((r) => setTimeout(r, 200));
      }
      writeFileSync(`${file}.tmp`, JSON.stringify(process.memoryUsage()));
      renameSync(`${file}.tmp`, file);
    })();
  });
