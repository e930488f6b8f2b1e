import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AssertionError } from '../../../src/util/assert.js';
import { EventLog, LogRangeError, type EventLogOptions } from '../../../src/storage/index.js';
import { bytes, captureLogger, collect, tempDir, text, withRawDb, rawLogKey } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
const opts = (): EventLogOptions => ({ fsync: 'always', logger: captureLogger().logger });

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await cleanup();
});

describe('EventLog append/read', () => {
  it('round-trips records with contiguous sequences', async () => {
    const log = await EventLog.open(dir, opts());
    expect([log.firstSeq, log.lastSeq]).toEqual([1, 0]);
    const a = await log.append([
      { type: 1, payload: bytes('one') },
      { type: 2, payload: bytes('') },
      { type: 255, payload: new Uint8Array(100_000).fill(7) },
    ]);
    expect(a).toMatchObject({ firstSeq: 1, lastSeq: 3 });
    expect(a.bytes).toBe(3 * 15 + 3 + 100_000);
    const b = await log.append([{ type: 3, payload: bytes('four') }]);
    expect(b).toMatchObject({ firstSeq: 4, lastSeq: 4 });

    const all = await collect(log.read(1));
    expect(all.map((r) => [r.seq, r.type])).toEqual([
      [1, 1],
      [2, 2],
      [3, 255],
      [4, 3],
    ]);
    expect(text(all[0].payload)).toBe('one');
    expect(all[1].payload.length).toBe(0);
    expect(all[2].payload.every((x) => x === 7)).toBe(true);
    expect((await collect(log.read(2, 3))).map((r) => r.seq)).toEqual([2, 3]);
    expect(await collect(log.read(5))).toEqual([]);
    expect((await collect(log.read(3, 99))).map((r) => r.seq)).toEqual([3, 4]);
    await log.close();
  });

  it('reads payloads at an offset inside a larger buffer', async () => {
    const log = await EventLog.open(dir, opts());
    const big = bytes('xxhelloxx');
    await log.append([{ type: 9, payload: big.subarray(2, 7) }]);
    const [r] = await collect(log.read(1));
    expect(text(r.payload)).toBe('hello');
    await log.close();
  });

  it('continues sequences across reopen', async () => {
    let log = await EventLog.open(dir, opts());
    await log.append(Array.from({ length: 2500 }, (_, i) => ({ type: 1, payload: bytes(`r${i + 1}`) })));
    await log.close();
    log = await EventLog.open(dir, opts());
    expect([log.firstSeq, log.lastSeq]).toEqual([1, 2500]);
    expect(await log.append([{ type: 1, payload: bytes('r2501') }])).toMatchObject({ firstSeq: 2501, lastSeq: 2501 });
    const all = await collect(log.read(1));
    expect(all.length).toBe(2501);
    all.forEach((r, i) => expect(text(r.payload)).toBe(`r${i + 1}`));
    await log.close();
  });

  it('commits meta in the same batch as the records', async () => {
    const log = await EventLog.open(dir, opts());
    await log.append([{ type: 1, payload: bytes('a') }], [{ key: 'kafka/t/0', value: bytes('41') }]);
    expect(text((await log.getMeta('kafka/t/0'))!)).toBe('41');
    // A batch that fails to encode writes neither its records nor its meta.
    await expect(
      log.append(
        [
          { type: 1, payload: bytes('b') },
          { type: 256, payload: bytes('c') },
        ],
        [{ key: 'kafka/t/0', value: bytes('99') }],
      ),
    ).rejects.toThrow(AssertionError);
    expect(log.lastSeq).toBe(1);
    expect(text((await log.getMeta('kafka/t/0'))!)).toBe('41');
    // Meta-only appends and deletes.
    expect(await log.append([], [{ key: 'kafka/t/0', value: null }])).toMatchObject({ firstSeq: 2, lastSeq: 1 });
    expect(await log.getMeta('kafka/t/0')).toBeUndefined();
    await expect(log.append([], [{ key: 'format-version', value: bytes('x') }])).rejects.toThrow(/reserved/);
    await log.close();
    const again = await EventLog.open(dir, opts());
    expect(again.lastSeq).toBe(1);
    expect(await again.getMeta('kafka/t/0')).toBeUndefined();
    await again.close();
  });

  it('refuses overlapping appends', async () => {
    const log = await EventLog.open(dir, opts());
    const first = log.append([{ type: 1, payload: bytes('a') }]);
    await expect(log.append([{ type: 1, payload: bytes('b') }])).rejects.toThrow(/overlapped/);
    await first;
    expect(log.lastSeq).toBe(1);
    await log.close();
  });

  it.each(['interval', 'never'] as const)('works with fsync policy %s', async (fsync) => {
    const log = await EventLog.open(dir, { fsync, fsyncIntervalMs: 5, logger: captureLogger().logger });
    await log.append([{ type: 1, payload: bytes('a') }]);
    await new Promise((r) => setTimeout(r, 20));
    await log.append([{ type: 1, payload: bytes('b') }]);
    await log.close();
    const again = await EventLog.open(dir, opts());
    expect((await collect(again.read(1))).map((r) => text(r.payload))).toEqual(['a', 'b']);
    await again.close();
  });
});

describe('EventLog retention', () => {
  it('releaseUpTo deletes the prefix and survives reopen', async () => {
    let log = await EventLog.open(dir, opts());
    await log.append(Array.from({ length: 10 }, (_, i) => ({ type: 1, payload: bytes(`${i + 1}`) })));
    await log.releaseUpTo(4);
    expect([log.firstSeq, log.lastSeq]).toEqual([5, 10]);
    await expect(collect(log.read(3))).rejects.toThrow(LogRangeError);
    expect((await collect(log.read(5))).map((r) => r.seq)).toEqual([5, 6, 7, 8, 9, 10]);
    await log.releaseUpTo(2); // already released: no-op
    await log.close();
    await withRawDb(dir, async (db) => expect(await db.get(rawLogKey(4))).toBeUndefined());
    log = await EventLog.open(dir, opts());
    expect([log.firstSeq, log.lastSeq]).toEqual([5, 10]);
    await log.close();
  });

  it('keeps the sequence after everything is released', async () => {
    let log = await EventLog.open(dir, opts());
    await log.append([
      { type: 1, payload: bytes('a') },
      { type: 1, payload: bytes('b') },
    ]);
    await log.releaseUpTo(2);
    await log.close();
    log = await EventLog.open(dir, opts());
    expect([log.firstSeq, log.lastSeq]).toEqual([3, 2]);
    expect(await log.append([{ type: 1, payload: bytes('c') }])).toMatchObject({ firstSeq: 3 });
    await log.close();
  });

  it('releasing past lastSeq makes the log continue after it (restore from a snapshot)', async () => {
    let log = await EventLog.open(dir, opts());
    await log.releaseUpTo(1000);
    await log.close();
    log = await EventLog.open(dir, opts());
    expect([log.firstSeq, log.lastSeq]).toEqual([1001, 1000]);
    expect(await log.append([{ type: 1, payload: bytes('x') }])).toMatchObject({ firstSeq: 1001 });
    expect((await collect(log.read(1001))).map((r) => r.seq)).toEqual([1001]);
    await log.close();
  });

  it('ignores and later clears leftovers under the floor (a release cut short by a crash)', async () => {
    let log = await EventLog.open(dir, opts());
    await log.append(Array.from({ length: 6 }, () => ({ type: 1, payload: bytes('r') })));
    await log.releaseUpTo(3);
    await log.close();
    // Put back a record under the floor, as if the unsynced range delete had been lost.
    await withRawDb(dir, async (db) => {
      await db.put(rawLogKey(2), Buffer.from([1, 1, 0, 0, 0, 0]), { sync: true });
    });
    log = await EventLog.open(dir, opts());
    expect([log.firstSeq, log.lastSeq]).toEqual([4, 6]);
    await log.releaseUpTo(4);
    await log.close();
    await withRawDb(dir, async (db) => expect(await db.get(rawLogKey(2))).toBeUndefined());
  });

  it('truncateAfter drops the suffix and appends continue from there', async () => {
    const log = await EventLog.open(dir, opts());
    await log.append(Array.from({ length: 10 }, () => ({ type: 1, payload: bytes('r') })));
    expect(await log.truncateAfter(6)).toBe(4);
    expect(log.lastSeq).toBe(6);
    expect(await log.append([{ type: 2, payload: bytes('new') }])).toMatchObject({ firstSeq: 7 });
    const all = await collect(log.read(1));
    expect(all.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(all[6].type).toBe(2);
    await log.close();
  });
});

describe('EventLog commit times', () => {
  it('stores one time per batch, maps times to sequences, keeps them across release, truncate and reopen', async () => {
    let log = await EventLog.open(dir, opts());
    await log.append([{ type: 1, payload: bytes('a') }], [], { timeMs: null }); // seq 1: time unknown (an old-format record)
    await log.append(
      [
        { type: 1, payload: bytes('b') },
        { type: 1, payload: bytes('c') },
      ],
      [],
      { timeMs: 1000 },
    ); // 2..3
    await log.append([{ type: 1, payload: bytes('d') }], [], { timeMs: 2000 }); // 4
    await log.append(
      [
        { type: 1, payload: bytes('e') },
        { type: 1, payload: bytes('f') },
      ],
      [],
      { timeMs: 1500 },
    ); // 5..6: clock went back
    expect(await log.commitTime(1)).toBeUndefined();
    expect([
      await log.commitTime(2),
      await log.commitTime(3),
      await log.commitTime(4),
      await log.commitTime(6),
    ]).toEqual([1000, 1000, 2000, 2000]);
    expect(await log.seqAtTime(999)).toBe(0);
    expect(await log.seqAtTime(1000)).toBe(3);
    expect(await log.seqAtTime(1999)).toBe(3);
    expect(await log.seqAtTime(2000)).toBe(6);
    // Release inside the 2..3 batch: record 3 keeps its time.
    await log.releaseUpTo(2);
    expect(await log.commitTime(3)).toBe(1000);
    expect(await log.seqAtTime(999)).toBe(2);
    // Truncating mid-batch keeps the batch's time; the next append gets its own.
    await log.truncateAfter(5);
    await log.close();
    log = await EventLog.open(dir, opts());
    expect(await log.commitTime(5)).toBe(2000);
    const before = Date.now();
    await log.append([{ type: 1, payload: bytes('g') }]);
    expect(await log.commitTime(6)).toBeGreaterThanOrEqual(before);
    const batches = [];
    for await (const b of log.commitBatches(3)) batches.push(b.firstSeq);
    expect(batches).toEqual([2, 4, 5, 6]);
    await log.close();
  });
});
