// Issue 11, history: backup MB/s (online over HTTP, and offline), restore events/s from that
// backup for a log of ≥ 1M events, and a first and a repeated atTime query beside the same
// query on the live state. In-process server (src/app.ts) on a real socket; the log is built
// as the replay bench builds it (unsynced appends of small events), so it has no snapshot: the
// server's start replays all of it and leaves snapshots every --snapshot-every-events inside the
// history window (issue 22), and a first atTime read at the worst point (just before one of
// them) replays from the one before.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { createServer } from '../src/app.js';
import { backupCommand } from '../src/cli/backup.js';
import { restoreCommand } from '../src/cli/restore.js';
import { DEFAULTS } from '../src/config/config.js';
import { buildLog } from './log-replay.js';
import type { Reporter } from './lib/report.js';
import { removeDir, tempDir } from './lib/server-child.js';
import { MB, now } from './lib/stats.js';

const EVENTS = Number(process.env.BENCH_REPLAY_EVENTS ?? 1_000_000);
const logger = pino({ level: 'silent' });
const quiet = (): void => undefined;

function dirBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) total += statSync(join(e.parentPath, e.name)).size;
  return total;
}

export async function runHistoryBench(r: Reporter): Promise<void> {
  r.begin(
    'history',
    `backup, restore and time-travel reads over a ${EVENTS.toLocaleString('en-US')}-event log (issue 11)`,
  );
  const root = tempDir('history');
  const data = join(root, 'data');
  try {
    const buildMs = await buildLog(data);
    r.note(`log built in ${(buildMs / 1000).toFixed(1)} s`);
    const server = await createServer(
      { ...DEFAULTS, dataDir: data, bind: '127.0.0.1:0', logLevel: 'silent' },
      logger,
      (err) => {
        throw err;
      },
    );
    let time: string;
    try {
      const port = await server.listen();
      const url = `http://127.0.0.1:${port}`;
      const t0 = now();
      await backupCommand(['--url', url, '--to', join(root, 'online')], logger, quiet);
      const onlineMs = now() - t0;
      const bytes = dirBytes(join(root, 'online'));
      r.figure('online backup (HTTP: newest snapshot + log)', bytes / MB / (onlineMs / 1000), 'MB/s');
      r.note(`online backup: ${(bytes / MB).toFixed(1)} MB in ${(onlineMs / 1000).toFixed(2)} s`);
      const h = (await (await fetch(`${url}/internal/history`)).json()) as {
        newest: { seq: number; time: string };
        snapshots: { seq: number; time: string }[];
      };
      time = h.newest.time;
      // Snapshots newest first: the worst point is just before a middle one (the most replay).
      const mid = h.snapshots[Math.floor(h.snapshots.length / 2)];
      r.note(`snapshots after the start's replay: ${h.snapshots.map((s) => s.seq).join(', ')}`);
      const q = async (qs: string): Promise<number> => {
        const t = now();
        const res = await fetch(`${url}/index/r/query${qs}`, { method: 'POST', body: 'Count(Row(f=7))' });
        if (!res.ok) throw new Error(`query answered ${res.status}: ${await res.text()}`);
        await res.text();
        return now() - t;
      };
      const live = Math.min(await q(''), await q(''), await q(''));
      const worstTime = new Date(Date.parse(mid.time) - 1).toISOString();
      const worst = await q(`?atTime=${encodeURIComponent(worstTime)}`);
      const first = await q(`?atTime=${encodeURIComponent(time)}`);
      const repeated = Math.min(
        await q(`?atTime=${encodeURIComponent(time)}`),
        await q(`?atTime=${encodeURIComponent(time)}`),
        await q(`?atTime=${encodeURIComponent(time)}`),
      );
      r.figure('live Count(Row) query', live, 'ms');
      r.figure('first atTime query, newest point (snapshot load)', first, 'ms');
      r.figure(`first atTime query, just before snapshot ${mid.seq} (replay)`, worst, 'ms', {
        op: '<=',
        value: 2000,
        source: 'issue 22',
      });
      r.figure('repeated atTime query (cached state)', repeated, 'ms');
    } finally {
      await server.close();
    }
    const t1 = now();
    await backupCommand(['--data-dir', data, '--to', join(root, 'offline')], logger, quiet);
    const offMs = now() - t1;
    r.figure('offline backup (data directory)', dirBytes(join(root, 'offline')) / MB / (offMs / 1000), 'MB/s');
    const t2 = now();
    await restoreCommand(['--from', join(root, 'online'), '--data-dir', join(root, 'restored')], logger, quiet);
    const restoreMs = now() - t2;
    r.figure('restore from backup (copy + replay + snapshot)', EVENTS / (restoreMs / 1000), 'events/s');
  } finally {
    removeDir(root);
  }
}
