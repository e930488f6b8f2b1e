// Issue 2, durable core: Set() requests/s over HTTP with fsync always (1 and 16 keep-alive
// clients, one Set of a distinct column per request), against raw classic-level synced 1-record
// batches of our records' size (read back from the server's log) in the same run.
import { HttpClient } from './lib/http-client.js';
import { readLog, type LogContents } from './lib/log-bytes.js';
import { closedLoop, type LoadResult } from './lib/load.js';
import { createField, createIndex, query } from './lib/pilosa.js';
import { openRaw, rawSyncedWrites } from './lib/raw-level.js';
import type { Reporter } from './lib/report.js';
import { startChildServer, removeDir, tempDir } from './lib/server-child.js';

const DURATION_MS = Number(process.env.BENCH_SET_MS ?? 5000);
const CLIENTS = [1, 16] as const;
const WARM_UP_MS = 2000;
const TARGET = { 1: 2000, 16: 4500 } as const;

export async function runDurableSet(r: Reporter): Promise<void> {
  r.begin('set', 'durable Set() over HTTP (issue 2)');
  const server = await startChildServer({ label: 'set', fsync: 'always' });
  const ours = new Map<number, LoadResult>();
  let requests = 0;
  try {
    const setup = new HttpClient(server.url);
    await createIndex(setup, 'b');
    await createField(setup, 'b', 'f');
    await query(setup, 'b', 'Set(0, f=0)');
    setup.close();
    let column = 1;
    // Steady state, not start-up: the server's hot paths are interpreted for the first second
    // or so (a cold 1-client run measured ~40% slower), so a warm-up load comes first, untimed.
    const warm = new HttpClient(server.url, 4);
    requests += (
      await closedLoop(4, WARM_UP_MS, async () => {
        const col = column++;
        await warm.ok('POST', '/index/b/query', `Set(${col}, f=${col % 10})`, 'text/plain');
      })
    ).requests;
    warm.close();
    for (const clients of CLIENTS) {
      const http = new HttpClient(server.url, clients);
      const res = await closedLoop(clients, DURATION_MS, async () => {
        const col = column++;
        await http.ok('POST', '/index/b/query', `Set(${col}, f=${col % 10})`, 'text/plain');
      });
      http.close();
      requests += res.requests;
      ours.set(clients, res);
      r.figure(`Set() req/s, ${clients} client(s), fsync always`, res.perSecond, 'req/s', {
        op: '>=',
        value: TARGET[clients],
        source: 'issue 2',
      });
      r.figure(`Set() latency p50, ${clients} client(s)`, res.p50Ms, 'ms');
      r.figure(`Set() latency p99, ${clients} client(s)`, res.p99Ms, 'ms');
    }
  } finally {
    await server.stop();
  }
  let log: LogContents;
  try {
    log = await readLog(server.dataDir);
  } finally {
    removeDir(server.dataDir);
  }
  // Raw: 1-record synced batches of our average record size (a Set request's group may hold two
  // records, the bit and _exists; both go down in one synced batch, so one sync per request).
  const valueBytes = Math.max(1, Math.round(log.bytes / log.records) - 9);
  r.note(
    `our log: ${log.records} records, ${log.bytes} B for ${requests + 1} Set requests (${(log.records / (requests + 1)).toFixed(2)} records per request); raw records: 9 B key + ${valueBytes} B value`,
  );
  const dir = tempDir('raw-set');
  const db = await openRaw(dir);
  try {
    for (const clients of CLIENTS) {
      const raw = await rawSyncedWrites(db, clients, Math.min(DURATION_MS, 3000), 1, valueBytes);
      r.figure(`raw classic-level synced batches/s, ${clients} writer(s)`, raw.perSecond, 'batch/s');
      r.figure(`raw synced batch latency p50, ${clients} writer(s)`, raw.p50Ms, 'ms');
      r.figure(`Set/raw ratio, ${clients} client(s)`, (ours.get(clients)?.perSecond ?? 0) / raw.perSecond, '×');
    }
  } finally {
    await db.close();
    removeDir(dir);
  }
}
