// The in-memory disk under the simulator (storage/memory/): the real EventLog over it keeps what
// was synced across a crash, keeps a chosen prefix of unsynced writes, drops a torn batch whole
// and part of a torn range delete, fails writes with ENOSPC (nothing written) and EIO (written,
// not durable), loses an acknowledged append only under --break acked-loss, and reports a
// damaged record. A dead handle's calls never settle.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { LOG_PREFIX } from '../../../src/storage/keys.js';
import { EventLog } from '../../../src/storage/event-log.js';
import { MemoryDisk, type StorageFaults } from '../../../src/storage/memory/memory-disk.js';
import { MemoryKv } from '../../../src/storage/memory/memory-kv.js';
import { MemorySnapshots } from '../../../src/storage/memory/memory-snapshots.js';
import { LogCorruptionError, SnapshotCorruptError } from '../../../src/storage/errors.js';
import { systemClock } from '../../../src/util/clock.js';

const silent = pino({ level: 'silent' });
const rec = (s: string): { type: number; payload: Uint8Array } => ({ type: 1, payload: Buffer.from(s) });
const isLog = (k: string): boolean => k.length === 9 && k.charCodeAt(0) === LOG_PREFIX;

async function openLog(disk: MemoryDisk, fsync: 'always' | 'never' = 'always'): Promise<EventLog> {
  return EventLog.openOn(new MemoryKv(disk), { fsync, logger: silent, clock: systemClock });
}

async function texts(log: EventLog): Promise<string[]> {
  const out: string[] = [];
  for await (const r of log.read(log.firstSeq)) out.push(Buffer.from(r.payload).toString());
  return out;
}

describe('MemoryDisk', () => {
  it('keeps synced appends and the chosen prefix of unsynced ones across a crash', async () => {
    const disk = new MemoryDisk(systemClock);
    const synced = await openLog(disk);
    await synced.append([rec('a'), rec('b')]);
    const unsynced = await openLog(disk, 'never');
    await unsynced.append([rec('c')]);
    await unsynced.append([rec('d')]);
    // Opening the second log cleared stray commit times (an unsynced range delete), then c and d.
    expect(disk.unsynced).toBe(3);
    disk.crash({ keepUnsynced: 2 });
    expect(await texts(await openLog(disk))).toEqual(['a', 'b', 'c']);
  });

  it('drops a torn batch whole, and applies part of a torn range delete', async () => {
    const disk = new MemoryDisk(systemClock);
    const log = await openLog(disk, 'never');
    await log.append([rec('a'), rec('b'), rec('c'), rec('d')]);
    disk.crash({ keepUnsynced: 0, tear: 0.9 });
    expect(await texts(await openLog(disk))).toEqual([]);

    const kv = new MemoryKv(disk);
    const batch = kv.batch();
    for (let i = 0; i < 10; i++) batch.put(Buffer.from(`k${i}`), Buffer.from('v'));
    await batch.write({ sync: true });
    await kv.clear({ gte: Buffer.from('k0'), lte: Buffer.from('k9') });
    disk.crash({ keepUnsynced: 0, tear: 0.5 });
    expect(await new MemoryKv(disk).keys({ gte: Buffer.from('k0'), lte: Buffer.from('k9') }).all()).toHaveLength(5);
  });

  it('fails chosen writes: ENOSPC writes nothing, EIO leaves the write not durable; the log refuses more', async () => {
    let fail: 'ENOSPC' | 'EIO' | undefined;
    const faults: StorageFaults = { failure: () => fail, latency: () => 0 };
    const disk = new MemoryDisk(systemClock, faults);
    const log = await openLog(disk);
    await log.append([rec('a')]);
    fail = 'ENOSPC';
    await expect(log.append([rec('b')])).rejects.toThrow(/ENOSPC/);
    fail = undefined;
    await expect(log.append([rec('c')])).rejects.toThrow(/unusable after a failed write/);
    const again = await openLog(disk);
    fail = 'EIO';
    await expect(again.append([rec('d')])).rejects.toThrow(/EIO/);
    fail = undefined;
    expect(disk.unsynced).toBeGreaterThan(0);
    disk.crash({ keepUnsynced: disk.unsynced });
    // The EIO write had reached the WAL: this crash kept it.
    expect(await texts(await openLog(disk))).toEqual(['a', 'd']);
  });

  it('loses the last acknowledged append only when asked (loseLastSynced)', async () => {
    const disk = new MemoryDisk(systemClock, undefined, isLog);
    const log = await openLog(disk);
    await log.append([rec('a')]);
    await log.append([rec('b'), rec('c')]);
    const honest = new MemoryDisk(systemClock, undefined, isLog);
    const other = await openLog(honest);
    await other.append([rec('a')]);
    await other.append([rec('b'), rec('c')]);
    honest.crash({ keepUnsynced: 0 });
    expect(await texts(await openLog(honest))).toEqual(['a', 'b', 'c']);
    disk.crash({ keepUnsynced: 0, loseLastSynced: true });
    expect(await texts(await openLog(disk))).toEqual(['a']);
  });

  it('reports a damaged record and a damaged snapshot; a handle from before a crash never answers', async () => {
    const disk = new MemoryDisk(systemClock);
    const log = await openLog(disk);
    await log.append([rec('a'), rec('b'), rec('c')]);
    const snaps = new MemorySnapshots(disk);
    await snaps.write(3, [Buffer.from('body')], 5);
    expect(Buffer.from(await snaps.read(3)).toString()).toBe('body');
    disk.crash({ keepUnsynced: 0 });
    const first = [...disk.durableEntries().keys()].filter(isLog).sort()[0];
    const d = disk.damage(
      (k) => k === first,
      () => 0,
    );
    expect(d).toBeDefined();
    await expect(texts(await openLog(disk))).rejects.toBeInstanceOf(LogCorruptionError);
    d?.undo();
    expect(await texts(await openLog(disk))).toEqual(['a', 'b', 'c']);
    const file = disk.snapshotFiles.get(3)!;
    file[33] ^= 1;
    await expect(new MemorySnapshots(disk).read(3)).rejects.toBeInstanceOf(SnapshotCorruptError);

    let settled = false;
    void log.append([rec('late')]).finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false);
  });
});
