// The WAL check against files LevelDB itself wrote: clean files have no damage; a flipped byte
// with valid records after it is reported as mid-file damage (and LevelDB would drop records);
// damage only at the very end is a torn tail.
import { readFileSync, readdirSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterEach, describe, expect, it } from 'vitest';
import { missingWal } from '../../../src/storage/leveldb-manifest.js';
import { scanWal, scanWalFiles } from '../../../src/storage/leveldb-wal.js';
import { removeDir, tempDir } from '../../helpers/temp.js';

let dir = '';
afterEach(() => removeDir(dir));

/** A LevelDB whose WAL holds 300 small synced writes and one record spanning several blocks. */
async function writeWal(): Promise<string> {
  dir = tempDir();
  const db = new ClassicLevel<string, string>(dir, {});
  await db.open();
  for (let i = 0; i < 150; i++) await db.put(`k${i}`, 'v'.repeat(i * 10), { sync: true });
  await db.put('big', 'x'.repeat(100_000), { sync: true });
  for (let i = 150; i < 300; i++) await db.put(`k${i}`, 'v'.repeat(i), { sync: true });
  await db.close();
  const [log] = readdirSync(dir).filter((n) => n.endsWith('.log'));
  return join(dir, log);
}

async function count(): Promise<number> {
  const db = new ClassicLevel<string, string>(dir, {});
  await db.open();
  const n = (await db.keys().all()).length;
  await db.close();
  return n;
}

describe('LevelDB WAL check', () => {
  it('finds no damage in files LevelDB wrote', async () => {
    const file = await writeWal();
    expect(readFileSync(file).length).toBeGreaterThan(3 * 32 * 1024);
    expect(await scanWalFiles(dir)).toEqual([]);
  });

  it('reports a flipped byte in the middle as damage with valid records after it', async () => {
    const file = await writeWal();
    const buf = readFileSync(file);
    const at = Math.floor(buf.length * 0.9);
    buf[at] ^= 0x5a;
    writeFileSync(file, buf);
    const damage = scanWal(file, buf);
    expect(damage).toHaveLength(1);
    expect(damage[0].tail).toBe(false);
    expect(damage[0].offset).toBeLessThanOrEqual(at);
    expect(damage[0].offset + damage[0].bytes).toBeGreaterThan(at);
    expect(damage[0].reason).toBe('checksum mismatch');
    // What the check guards against: LevelDB opens it and silently has fewer keys.
    expect(await count()).toBeLessThan(301);
  });

  it('reports damage inside a record spanning blocks from the record start', async () => {
    const file = await writeWal();
    const buf = readFileSync(file);
    const big = buf.indexOf('x'.repeat(64));
    buf[big + 40_000] ^= 0x01; // in a middle fragment of the 100 kB record
    const damage = scanWal(file, buf);
    expect(damage.length).toBeGreaterThanOrEqual(1);
    expect(damage[0].tail).toBe(false);
    expect(damage[0].offset).toBeLessThan(big);
  });

  it('calls damage with nothing valid after it a torn tail', async () => {
    const file = await writeWal();
    const len = readFileSync(file).length;
    truncateSync(file, len - 5);
    const cut = scanWal(file, readFileSync(file));
    expect(cut).toHaveLength(1);
    expect(cut[0]).toMatchObject({ tail: true, reason: 'record cut short by the end of the file' });
    const buf = readFileSync(file);
    buf[buf.length - 3] ^= 0xff;
    expect(scanWal(file, buf)).toMatchObject([{ tail: true }]);
  });
});

describe('LevelDB MANIFEST check', () => {
  it('names the WAL the MANIFEST expects when it is missing, across reopenings', async () => {
    const file = await writeWal();
    expect(await missingWal(dir, readdirSync(dir))).toBeUndefined();
    // A reopen flushes the WAL into a table and starts a new one, which the MANIFEST names.
    expect(await count()).toBe(301);
    const logs = readdirSync(dir).filter((n) => n.endsWith('.log'));
    expect(logs).not.toContain(file.slice(dir.length + 1));
    expect(await missingWal(dir, readdirSync(dir))).toBeUndefined();
    unlinkSync(join(dir, logs[0]));
    expect(await missingWal(dir, readdirSync(dir))).toBe(logs[0]);
  });
});
