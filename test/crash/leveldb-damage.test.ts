// Damage below the event log, in LevelDB's own files, with real server processes: a flipped
// byte in LevelDB's WAL with valid records after it, and a lost leveldb/CURRENT. A start and an
// inspect refuse with the named cause on one line (no stack trace) and change no file; the
// repair command the message names (LevelDB's own repair) then brings the data back.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLevelDb } from '../../src/storage/index.js';
import { freePort, removeDir, spawnServer, tempDir } from '../helpers/server.js';

let dataDir = '';
afterEach(() => removeDir(dataDir));

/** Runs `bitledger <args>` to completion. */
function cli(args: string[]): { status: number | null; out: string } {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/main.ts', ...args, '--data-dir', dataDir, '--log-level', 'warn'],
    { encoding: 'utf8', timeout: 60_000 },
  );
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** Every file under the data directory with its size and a digest of its bytes. */
function listing(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else
        out.push(
          `${path.slice(dataDir.length)} ${statSync(path).size} ${readFileSync(path).toString('base64').slice(-24)}`,
        );
    }
  };
  walk(dataDir);
  return out;
}

async function query(url: string, pql: string): Promise<unknown[]> {
  const r = await fetch(`${url}/index/c/query`, { method: 'POST', body: pql });
  expect(r.status).toBe(200);
  return ((await r.json()) as { results: unknown[] }).results;
}

/** A server that acknowledged `sets` Set() calls, one request each, then was SIGKILLed. */
async function seed(sets: number, restarts = 0): Promise<void> {
  const port = await freePort();
  let server = await spawnServer(dataDir, port);
  expect((await fetch(`${server.url}/index/c`, { method: 'POST' })).status).toBe(200);
  expect((await fetch(`${server.url}/index/c/field/f`, { method: 'POST' })).status).toBe(200);
  for (let i = 0; i < sets; i++) expect(await query(server.url, `Set(${i}, f=1)`)).toEqual([true]);
  // Each restart turns LevelDB's WAL into a table file (.ldb) at open.
  for (let r = 0; r < restarts; r++) {
    await server.kill('SIGKILL');
    server = await spawnServer(dataDir, port);
  }
  await server.kill('SIGKILL');
}

function expectOneLineRefusal(r: { status: number | null; out: string }, cause: RegExp): void {
  expect(r.status).toBe(2);
  const lines = r.out
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('bitledger:'));
  expect(lines, r.out).toHaveLength(1);
  expect(lines[0]).toMatch(cause);
  expect(r.out).not.toMatch(/\n\s+at /); // no stack trace
}

describe('damage in LevelDB files', () => {
  it('refuses a WAL with a damaged record followed by valid ones, changing nothing; repair recovers', async () => {
    dataDir = tempDir('bitledger-wal-damage-');
    await seed(200);
    const wal = readdirSync(join(dataDir, 'leveldb')).filter((n) => n.endsWith('.log'));
    expect(wal).toHaveLength(1);
    const file = join(dataDir, 'leveldb', wal[0]);
    const bytes = readFileSync(file);
    const at = Math.floor(bytes.length * 0.98);
    for (let i = 0; i < 4; i++) bytes[at + i] ^= 0xff;
    writeFileSync(file, bytes);
    const before = listing();

    const start = cli(['server', '--bind', `127.0.0.1:${await freePort()}`]);
    expectOneLineRefusal(
      start,
      new RegExp(
        `write-ahead file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is corrupt at offset \\d+ .*bitledger repair --data-dir .*--accept-data-loss`,
      ),
    );
    const inspect = cli(['inspect']);
    expect(inspect.status, inspect.out).toBe(0);
    expect(inspect.out).toMatch(/damage: .*checksum mismatch; valid records follow: a start refuses/);
    expect(listing()).toEqual(before);

    const repair = cli(['repair']);
    expect(repair.status, repair.out).toBe(0);
    expect(repair.out).toMatch(/repaired LevelDB/);
    // LevelDB's repair drops the damaged record and the rest of its block, as the refusal said;
    // the operator chose that, and the server starts on what is left.
    const server = await spawnServer(dataDir, await freePort());
    const [count] = (await query(server.url, 'Count(Row(f=1))')) as number[];
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThan(200);
    await server.kill('SIGKILL');
  }, 120_000);

  it('starts past a damaged WAL record only with --accept-data-loss, logging what was dropped', async () => {
    dataDir = tempDir('bitledger-wal-accept-');
    await seed(50);
    const file = join(dataDir, 'leveldb', readdirSync(join(dataDir, 'leveldb')).find((n) => n.endsWith('.log'))!);
    const bytes = readFileSync(file);
    bytes[Math.floor(bytes.length * 0.5)] ^= 0xff;
    writeFileSync(file, bytes);
    expectOneLineRefusal(
      cli(['server', '--bind', `127.0.0.1:${await freePort()}`]),
      /is corrupt at offset \d+ \(checksum mismatch/,
    );
    const server = await spawnServer(dataDir, await freePort(), ['--accept-data-loss']);
    // LevelDB drops the rest of the block: every write after the damaged one is gone, and said so.
    const [count] = (await query(server.url, 'Count(Row(f=1))')) as number[];
    expect(count).toBeLessThan(50);
    const m = /"level":40.*accepting the loss of (\d+) bytes at offset (\d+)/.exec(server.output());
    expect(m, server.output()).not.toBeNull();
    expect(Number(m![1]) + Number(m![2])).toBe(bytes.length); // one block: lost to the end of the file
    await server.kill('SIGKILL');
  }, 120_000);

  it('logs a torn WAL tail at warn and starts', async () => {
    dataDir = tempDir('bitledger-wal-tail-');
    await seed(30);
    const file = join(dataDir, 'leveldb', readdirSync(join(dataDir, 'leveldb')).find((n) => n.endsWith('.log'))!);
    const bytes = readFileSync(file);
    writeFileSync(file, bytes.subarray(0, bytes.length - 3)); // the last write never completed
    const port = await freePort();
    const server = await spawnServer(dataDir, port);
    expect(await query(server.url, 'Count(Row(f=1))')).toEqual([29]);
    expect(server.output()).toMatch(/"level":40.*dropping a torn tail of \d+ bytes/);
    await server.kill('SIGKILL');
  }, 120_000);

  it('refuses a LevelDB without CURRENT in start and inspect, deleting no table file; repair recovers', async () => {
    dataDir = tempDir('bitledger-no-current-');
    await seed(100, 1);
    const tables = readdirSync(join(dataDir, 'leveldb')).filter((n) => n.endsWith('.ldb'));
    expect(tables.length).toBeGreaterThan(0);
    unlinkSync(join(dataDir, 'leveldb', 'CURRENT'));
    const before = listing();

    const start = cli(['server', '--bind', `127.0.0.1:${await freePort()}`]);
    expectOneLineRefusal(start, /leveldb\/CURRENT is missing\. Nothing was changed\. Run bitledger repair --data-dir /);
    const inspect = cli(['inspect']);
    expectOneLineRefusal(inspect, /CURRENT is missing.*bitledger repair/);
    expect(listing()).toEqual(before);

    expect(cli(['repair']).status).toBe(0);
    const port = await freePort();
    const server = await spawnServer(dataDir, port);
    expect(await query(server.url, 'Count(Row(f=1))')).toEqual([100]);
    await server.kill('SIGKILL');
  }, 120_000);

  it('refuses a start whose LevelDB WAL file is lost, naming it', async () => {
    dataDir = tempDir('bitledger-wal-lost-');
    await seed(20);
    const wal = readdirSync(join(dataDir, 'leveldb')).find((n) => n.endsWith('.log'))!;
    unlinkSync(join(dataDir, 'leveldb', wal));
    const before = listing();
    expectOneLineRefusal(
      cli(['server', '--bind', `127.0.0.1:${await freePort()}`]),
      new RegExp(`write-ahead file .*${wal} named by the MANIFEST is missing.*bitledger repair`),
    );
    expect(listing()).toEqual(before);
  }, 120_000);

  it('inspect is read-only: it neither drops a torn log tail nor lets LevelDB rewrite its files', async () => {
    dataDir = tempDir('bitledger-inspect-ro-');
    await seed(20);
    // Tear the event log's last record (seq 22: index, field, 20 Sets): a start would drop it.
    const db = await openLevelDb(dataDir);
    const keys = (await db.keys({ gte: Buffer.from('L'), lt: Buffer.from('M') }).all()) as Buffer[];
    const last = keys[keys.length - 1];
    await db.put(last, ((await db.get(last)) as Buffer).subarray(0, 3), { sync: true });
    await db.close();
    const before = listing();
    const r = cli(['inspect']);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toMatch(/a start will drop a torn tail of 1 record\(s\) after sequence 21/);
    expect(r.out).toMatch(/log: +sequences 1\.\.21 /);
    // Nothing changed: LevelDB did not turn its WAL into a table, the torn record is still there.
    expect(listing()).toEqual(before);
    expect(cli(['inspect']).out).toMatch(/a start will drop a torn tail of 1 record/);
  }, 120_000);
});
