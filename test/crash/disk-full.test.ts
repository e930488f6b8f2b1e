// Disk full, on a real 128 MiB tmpfs mounted by the test (root only; CI runs as root): a server
// process whose disk fills answers writes 507 with nothing half-applied, goes on answering
// reads, takes writes again once space is freed, and starts again on a nearly full disk.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, serverArgv, spawnServer, type ChildServer } from '../helpers/server.js';
import { isRoot, mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';
import { ROW_BITS as BITS, countRows, importRow, post } from '../helpers/row-imports.js';

const MIB = 1024 * 1024;
const RESERVE = 32 * MIB; // the floor; writes answer 507 below this; the reserve file is half of it
let disk: Tmpfs | undefined;
let dataDir = '';
let server: ChildServer | undefined;

beforeAll(() => {
  if (!isRoot) return;
  disk = mountTmpfs(128, 'bitledger-diskfull-');
  dataDir = join(disk.dir, 'data');
  mkdirSync(dataDir);
});

afterAll(async () => {
  await server?.kill('SIGKILL');
  disk?.unmount();
});

const fill = (leave: number): void => disk!.fill(leave);
const unfill = (): void => disk!.unfill();

async function rowCounts(url: string, rows: number[]): Promise<number[]> {
  const r = await countRows(url, rows);
  expect(r.status).toBe(200);
  return r.counts;
}

describe.skipIf(!isRoot)('disk full on a 128 MiB tmpfs', () => {
  it('refuses writes with 507, keeps reads, resumes when space returns, restarts on a nearly full disk', async () => {
    const args = ['--disk-reserve-bytes', String(RESERVE), '--snapshot-every-events', '1000000'];
    const port = await freePort();
    server = await spawnServer(dataDir, port, args);
    expect((await post(`${server.url}/index/c`, '')).status).toBe(200);
    expect((await post(`${server.url}/index/c/field/f`, '')).status).toBe(200);

    // 1. Fill the disk to 4 MiB above the reserve, then import until the server refuses.
    fill(RESERVE + 4 * MIB);
    const acked: number[] = [];
    let refused: Response | undefined;
    for (let row = 1; row <= 400 && refused === undefined; row++) {
      const r = await importRow(server.url, row);
      if (r.status === 200) acked.push(row);
      else refused = r;
    }
    expect(refused?.status).toBe(507);
    const body = (await refused!.json()) as { success: boolean; error: { message: string } };
    expect(body.error.message).toMatch(
      /^disk full: [\d.]+ MiB free .* below the 32\.0 MiB kept .*writes resume once space is freed/,
    );
    expect(acked.length).toBeGreaterThan(10);
    const refusedRow = acked.length + 1;
    // A PQL write is refused the same way, and nothing of either refused write was applied.
    const set = await post(`${server.url}/index/c/query`, `Set(1, f=${refusedRow})`);
    expect(set.status).toBe(507);
    expect(((await set.json()) as { error: string }).error).toMatch(/^disk full/);

    // 2. Reads go on: every acknowledged import is whole, the refused row is empty.
    const counts = await rowCounts(server.url, [...acked, refusedRow]);
    expect(counts.slice(0, -1).every((c) => c > BITS * 0.95)).toBe(true);
    expect(counts[counts.length - 1]).toBe(0);
    expect((await fetch(`${server.url}/status`)).status).toBe(200);

    // 3. Space returns: writes work again, without a restart.
    unfill();
    const again = await importRow(server.url, refusedRow);
    expect(again.status).toBe(200);
    acked.push(refusedRow);
    const expected = await rowCounts(server.url, acked);

    // 4. A crash, then the disk fills (by something else) to less than the reserve file holds:
    // the start releases the reserve file, LevelDB replays its WAL, every write is there, and
    // writes are refused until space is freed.
    await server.kill('SIGKILL');
    fill(256 * 1024);
    server = await spawnServer(dataDir, port, args);
    expect(server.output()).toMatch(/released the [\d.]+ MiB reserve file so that LevelDB can open/);
    expect(await rowCounts(server.url, acked)).toEqual(expected);
    expect((await importRow(server.url, 9999)).status).toBe(507);
    unfill();
    expect((await importRow(server.url, 9999)).status).toBe(200);

    // 5. No room at all (the reserve file is gone too): the start is refused on one line, as a
    // full disk rather than damage, and works once space is freed.
    await server.kill('SIGKILL');
    rmSync(join(dataDir, 'disk-reserve'), { force: true });
    fill(0);
    const r = spawnSync(process.execPath, serverArgv(dataDir, port, args), { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr.trim()).toMatch(
      /^bitledger: disk full: LevelDB in .* cannot open \(.*No space left.*\)\. Nothing was lost; free space/,
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
    unfill();
    server = await spawnServer(dataDir, port, args);
    expect((await rowCounts(server.url, [9999]))[0]).toBeGreaterThan(BITS * 0.95);
  }, 240_000);
});
