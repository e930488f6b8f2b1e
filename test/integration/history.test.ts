// Point-in-time restore, backup and time-travel reads end to end, on a real server and LevelDB:
// writes in phases (sets, imports, int values, keys, a ClearRow, a deleted field, a deleted
// index), the history's newest point noted after each with the live answers to a fixed query
// set; then atSeq/atTime reads while writes go on, an online backup under concurrent writes,
// and restores to every noted point (by sequence and by time, from the data directory and from
// a backup), each served by a fresh server and compared with what the live server answered.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupCommand } from '../../src/cli/backup.js';
import { logCommand } from '../../src/cli/log.js';
import { restoreCommand } from '../../src/cli/restore.js';
import { removeDir, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { PHASES, answers, newest, ok, pause, req, stripSchema, type Point } from './history-workload.js';

const quiet = pino({ level: 'silent' });
const lines: string[] = [];
const out = (l: string): void => void lines.push(l);

let server: TestServer;
const points: Point[] = [];
let backupDir: string;
const dirs: string[] = [];
const newDir = (): string => {
  const d = join(tempDir(), 'restored');
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  server = await startServer();
  for (const [name, run] of PHASES) {
    await run(server);
    const n = await newest(server);
    points.push({ name, seq: n.seq, time: n.time, answers: await answers(server) });
    await pause(5); // so each phase's last commit time is strictly before the next phase's first
  }
}, 60_000);

afterAll(async () => {
  if (server !== undefined) await server.close();
  removeDir(server?.dataDir ?? '');
  for (const d of dirs) removeDir(d);
  if (backupDir !== undefined) removeDir(backupDir);
});

/** Restores with the CLI code into a new directory, serves it, and returns its answers. */
async function restoredAnswers(args: string[]): Promise<{ answers: string; seq: number }> {
  const dest = newDir();
  await restoreCommand([...args, '--data-dir', dest], quiet, out);
  const s = await startServer({ dataDir: dest });
  try {
    return { answers: await answers(s), seq: s.engine.appliedSeq };
  } finally {
    await s.close();
  }
}

describe('history while the server runs', () => {
  it('GET /internal/history names the window and its snapshots', async () => {
    const h = JSON.parse(await ok(server, 'GET', '/internal/history')) as {
      oldest: { seq: number };
      newest: { seq: number; time: string };
      snapshots: { seq: number; time: string; bytes: number }[];
    };
    expect(h.oldest.seq).toBe(0);
    expect(h.newest.seq).toBe(points[points.length - 1].seq);
    expect(h.snapshots.map((s) => s.seq)).toEqual([points[4].seq - 1, points[1].seq]);
    for (const s of h.snapshots) {
      expect(Date.parse(s.time)).toBeGreaterThan(0);
      expect(s.bytes).toBeGreaterThan(32);
    }
  });

  it('atSeq and atTime answer as the live server did at each point, while writes go on', async () => {
    let writing = true;
    const writer = (async () => {
      for (let c = 1000; writing && c < 1400; c++) await ok(server, 'POST', '/index/i/query', `Set(${c}, f=7)`);
    })();
    try {
      for (const p of points) {
        expect(await answers(server, `?atSeq=${p.seq}`), `${p.name} by seq`).toBe(stripSchema(p.answers));
        expect(await answers(server, `?atTime=${encodeURIComponent(p.time)}`), `${p.name} by time`).toBe(
          stripSchema(p.answers),
        );
      }
      // Repeated: served from the cache, same answer.
      expect(await answers(server, `?atSeq=${points[2].seq}`)).toBe(stripSchema(points[2].answers));
    } finally {
      writing = false;
      await writer;
    }
  }, 120_000);

  it('refuses writes and points outside the window with 400', async () => {
    const w = await req(server, 'POST', `/index/i/query?atSeq=${points[0].seq}`, 'Set(1, f=9)');
    expect(w.status).toBe(400);
    expect(w.body).toMatch(/read-only/);
    const future = await req(server, 'POST', '/index/i/query?atSeq=999999999', 'Row(f=1)');
    expect(future.status).toBe(400);
    expect(future.body).toMatch(/outside the history: the history holds sequence 0 to sequence \d+/);
    const early = await req(server, 'POST', '/index/i/query?atTime=2001-01-01T00:00:00Z', 'Row(f=1)');
    expect(early.status).toBe(400);
    expect(early.body).toMatch(/outside the history/);
    expect((await req(server, 'POST', '/index/i/query?atTime=yesterday', 'Row(f=1)')).status).toBe(400);
  });

  it('an online backup under concurrent writes restores equal to the primary at its last sequence', async () => {
    const url = `http://127.0.0.1:${await server.listen()}`;
    backupDir = join(tempDir(), 'backup');
    let writing = true;
    const writer = (async () => {
      for (let c = 2000; writing && c < 2600; c++) await ok(server, 'POST', '/index/i/query', `Set(${c}, f=8)`);
    })();
    try {
      await pause(20);
      await backupCommand(['--url', url, '--to', backupDir], quiet, out);
    } finally {
      writing = false;
      await writer;
    }
    const manifest = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8')) as {
      range: { fromSeq: number; toSeq: number };
      segments: { file: string }[];
    };
    expect(manifest.range.fromSeq).toBe(points[4].seq - 1); // the newest snapshot
    const primary = await answers(server, `?atSeq=${manifest.range.toSeq}`);
    const restored = await restoredAnswers(['--from', backupDir]);
    expect(restored.seq).toBe(manifest.range.toSeq);
    expect(stripSchema(restored.answers)).toBe(primary);
    // A second backup adds only the log since the first.
    await ok(server, 'POST', '/index/i/query', 'Set(3000, f=8)');
    await backupCommand(['--url', url, '--to', backupDir], quiet, out);
    const again = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8')) as {
      range: { toSeq: number };
      segments: { file: string }[];
    };
    expect(again.segments.length).toBe(2);
    expect(again.range.toSeq).toBe((await newest(server)).seq);
    expect(lines.at(-1)).toMatch(new RegExp(`added sequences ${manifest.range.toSeq + 1}\\.\\.${again.range.toSeq}`));
  }, 120_000);
});

describe('restore (server stopped)', () => {
  beforeAll(async () => {
    await server.close();
  });

  it('from the data directory, to every noted point by sequence and by time', async () => {
    for (const p of points) {
      const bySeq = await restoredAnswers(['--from', server.dataDir, '--to-seq', String(p.seq)]);
      expect(bySeq.seq, p.name).toBe(p.seq);
      expect(bySeq.answers, `${p.name} by seq`).toBe(p.answers);
      const byTime = await restoredAnswers(['--from', server.dataDir, '--to-time', p.time]);
      expect(byTime.seq, p.name).toBe(p.seq);
      expect(byTime.answers, `${p.name} by time`).toBe(p.answers);
    }
  }, 180_000);

  it('from a backup, to the noted points it holds, by sequence and by time', async () => {
    const held = points.filter((p) => p.seq >= points[4].seq - 1);
    expect(held.length).toBeGreaterThanOrEqual(3);
    for (const p of held) {
      expect((await restoredAnswers(['--from', backupDir, '--to-seq', String(p.seq)])).answers, p.name).toBe(p.answers);
      expect((await restoredAnswers(['--from', backupDir, '--to-time', p.time])).answers, p.name).toBe(p.answers);
    }
  }, 180_000);

  it('an offline backup of the data directory restores to the same newest state', async () => {
    const off = join(tempDir(), 'offline');
    dirs.push(off);
    await backupCommand(['--data-dir', server.dataDir, '--to', off], quiet, out);
    const fromBackup = await restoredAnswers(['--from', off]);
    const fromDir = await restoredAnswers(['--from', server.dataDir]);
    expect(fromBackup.answers).toBe(fromDir.answers);
    expect(fromBackup.seq).toBe(fromDir.seq);
  }, 60_000);

  it('refuses targets outside the history, a corrupt backup, a non-empty target and bad arguments, writing nothing', async () => {
    const dest = newDir();
    const refused = async (args: string[], message: RegExp): Promise<void> => {
      await expect(restoreCommand([...args, '--data-dir', dest], quiet, out)).rejects.toThrow(message);
      expect(existsSync(dest)).toBe(false);
    };
    await refused(
      ['--from', server.dataDir, '--to-seq', '99999999'],
      /sequence 99999999 is outside the history: the history holds sequence 0 to sequence \d+/,
    );
    await refused(['--from', server.dataDir, '--to-time', '2001-01-01T00:00:00Z'], /outside the history/);
    await refused(
      ['--from', backupDir, '--to-seq', '1'],
      /sequence 1 is outside the history: the history holds sequence \d+ \(.*\) to sequence \d+/,
    );
    await refused(['--from', server.dataDir, '--to-time', 'noon'], /--to-time must be an RFC 3339 time/);
    await refused(['--from', server.dataDir, '--to-seq', '3', '--to-time', '5'], /not both/);
    await refused(['--from', server.dataDir, '--bogus', '1'], /unknown flag --bogus/);
    await refused(['--from', '/nonexistent/dir'], /neither a bitledger backup/);
    // A flipped byte in a backup segment, and a missing file.
    const bad = join(tempDir(), 'bad');
    dirs.push(bad);
    await backupCommand(['--data-dir', server.dataDir, '--to', bad], quiet, out);
    const m = JSON.parse(readFileSync(join(bad, 'manifest.json'), 'utf8')) as {
      segments: { file: string }[];
      snapshot: { file: string };
    };
    const seg = join(bad, m.segments[0].file);
    const bytes = readFileSync(seg);
    bytes[Math.floor(bytes.length / 2)] ^= 1;
    writeFileSync(seg, bytes);
    await refused(['--from', bad], /fails its checksum/);
    removeDir(join(bad, m.snapshot.file));
    await refused(['--from', bad], /is missing or unreadable/);
    // Non-empty target.
    const full = newDir();
    mkdirSync(full, { recursive: true });
    writeFileSync(join(full, 'something'), 'x');
    await expect(restoreCommand(['--from', server.dataDir, '--data-dir', full], quiet, out)).rejects.toThrow(
      /is not empty/,
    );
    expect(readdirSync(full)).toEqual(['something']);
  }, 60_000);

  it('the CLI prints one line, no stack trace, for an expected error', () => {
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/main.ts',
        'restore',
        '--from',
        server.dataDir,
        '--data-dir',
        newDir(),
        '--to-seq',
        '99999999',
      ],
      { encoding: 'utf8' },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^bitledger: restore: sequence 99999999 is outside the history/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const t = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', 'truncate-log', '--after', '1', '--data-dir', server.dataDir],
      { encoding: 'utf8' },
    );
    expect(t.status).toBe(2);
    expect(t.stderr).toMatch(/below the newest snapshot .* bitledger restore --from/);
    expect(t.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('log inspect lists records with their commit times; log verify passes on the intact directory', async () => {
    lines.length = 0;
    await logCommand(['inspect', '--data-dir', server.dataDir, '--index', 'k'], quiet, out);
    const rows = lines.filter((l) => /^\d+\t/.test(l));
    expect(rows.some((l) => /\tIndexCreated\tk\t/.test(l))).toBe(true);
    expect(rows.some((l) => /\tIndexDeleted\tk\t/.test(l))).toBe(true);
    expect(rows.every((l) => /^\d+\t\d{4}-\d\d-\d\dT[^\t]+Z\t\w+\tk(\/\w+)?\t\d+$/.test(l))).toBe(true);
    lines.length = 0;
    await logCommand(['verify', '--data-dir', server.dataDir], quiet, out);
    expect(lines.at(-1)).toMatch(/OK: records 1\.\.\d+/);
  }, 30_000);
});
