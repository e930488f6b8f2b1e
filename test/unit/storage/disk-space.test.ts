// The disk-space guard on the real file system: the reserve counts the largest snapshot, and the
// reserve file is made with real bytes and released only when space is short.
import { existsSync, mkdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { DiskSpace, freeBytes, keepReserve, releaseReserveIfShort } from '../../../src/storage/disk-space.js';
import { removeDir, tempDir } from '../../helpers/temp.js';

const silent = pino({ level: 'silent' });
const MIB = 1024 * 1024;
let dir = '';
afterEach(() => removeDir(dir));

describe('DiskSpace', () => {
  it('refuses below the reserve plus the largest snapshot, and names both in one line', async () => {
    dir = tempDir();
    const free = freeBytes(dir);
    expect((await DiskSpace.open(dir, MIB)).shortfall()).toBeUndefined();
    expect((await DiskSpace.open(dir, 0)).shortfall(10 * free)).toBeUndefined(); // 0 turns the guard off
    // A snapshot written since the start, larger than the free space: no room for the next one.
    expect((await DiskSpace.open(dir, MIB)).shortfall(2 * free)).toMatch(
      /^disk full: [\d.]+ MiB free for .*, below the [\d.]+ MiB kept .*reads go on$/,
    );
    // The same for a snapshot already on disk at the start (a sparse file: its size, not its blocks).
    mkdirSync(join(dir, 'snapshots'));
    writeFileSync(join(dir, 'snapshots', 'snap-0000000000000007.snap'), '');
    truncateSync(join(dir, 'snapshots', 'snap-0000000000000007.snap'), 2 * free);
    expect((await DiskSpace.open(dir, MIB)).shortfall()).toMatch(/^disk full/);
  });

  it('keeps a reserve file of real bytes and releases it only when space is short', async () => {
    dir = tempDir();
    const file = join(dir, 'disk-reserve');
    await keepReserve(dir, 4 * MIB, silent);
    expect(statSync(file).size).toBe(2 * MIB);
    expect(statSync(file).blocks * 512).toBeGreaterThanOrEqual(2 * MIB);
    await releaseReserveIfShort(dir, 4 * MIB, silent); // plenty of space: kept
    expect(existsSync(file)).toBe(true);
    await releaseReserveIfShort(dir, 2 * freeBytes(dir), silent); // short: released
    expect(existsSync(file)).toBe(false);
  });
});
