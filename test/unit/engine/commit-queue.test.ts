// Group commit against the real LevelDB log: concurrent writers share synced batches, every
// waiter is released only after its records are durable, and sequences stay contiguous.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { CommitQueue, takeBatch, type Group } from '../../../src/engine/commit-queue.js';
import { commitTestHooks } from '../../../src/config/test-hooks.js';
import { EventLog } from '../../../src/storage/index.js';
import { removeDir, tempDir } from '../../helpers/temp.js';

const silent = pino({ level: 'silent' });
let dir = '';
afterEach(() => removeDir(dir));

describe('CommitQueue', () => {
  it('gathers concurrent stages into few synced batches, in order', async () => {
    dir = tempDir();
    const log = await EventLog.open(dir, { fsync: 'always', logger: silent });
    const q = new CommitQueue(log, log.lastSeq, (e) => {
      throw e;
    });
    const waits: Promise<void>[] = [];
    const seqs: number[] = [];
    for (let i = 0; i < 500; i++) {
      const seq = q.stage({ type: 5, payload: Buffer.from(`record ${i}`) });
      seqs.push(seq);
      q.endGroup(true);
      waits.push(q.whenDurable(seq));
    }
    await Promise.all(waits);
    expect(seqs).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    expect(q.durableSeq).toBe(500);
    expect(q.stats.records).toBe(500);
    expect(q.stats.batches).toBeLessThan(10);
    const read: string[] = [];
    for await (const r of log.read(1)) read.push(Buffer.from(r.payload).toString());
    expect(read[0]).toBe('record 0');
    expect(read[499]).toBe('record 499');
    await log.close();
  });

  it('rejects every waiter and reports once when an append fails', async () => {
    dir = tempDir();
    const log = await EventLog.open(dir, { fsync: 'always', logger: silent });
    const fatal: Error[] = [];
    const q = new CommitQueue(log, log.lastSeq, (e) => fatal.push(e));
    await log.close(); // appends now fail
    const seq = q.stage({ type: 5, payload: Buffer.from('x') });
    q.endGroup(true);
    await expect(q.whenDurable(seq)).rejects.toThrow();
    expect(fatal).toHaveLength(1);
    expect(() => q.stage({ type: 5, payload: Buffer.from('y') })).toThrow();
  });
});

let ordinal = 0;
const group = (records: number, closed = true): Group => ({
  records: Array.from({ length: records }, (_, i) => ({ type: 5, payload: Buffer.from(`r${i}`) })),
  meta: [],
  closed,
  sync: true,
  ordinal: ++ordinal,
});
const sizes = (gs: Group[]): number[] => gs.map((g) => g.records.length);

describe('takeBatch (where batches are cut)', () => {
  it('takes whole groups while they fit', () => {
    const gs = [group(3), group(4), group(5)];
    expect(sizes(takeBatch(gs, 8))).toEqual([3, 4]);
    expect(sizes(gs)).toEqual([5]);
  });

  it('takes a group larger than the limit alone, never a part of it', () => {
    const gs = [group(12), group(1)];
    expect(sizes(takeBatch(gs, 5))).toEqual([12]);
    expect(sizes(takeBatch(gs, 5))).toEqual([1]);
    expect(gs).toEqual([]);
  });

  it('stops before an oversized group that follows smaller ones', () => {
    const gs = [group(2), group(9), group(2)];
    expect(sizes(takeBatch(gs, 5))).toEqual([2]);
    expect(sizes(takeBatch(gs, 5))).toEqual([9]);
    expect(sizes(takeBatch(gs, 5))).toEqual([2]);
  });

  it('never takes a group that is still open', () => {
    const gs = [group(1), group(2, false)];
    expect(sizes(takeBatch(gs, 100))).toEqual([1]);
    expect(takeBatch(gs, 100)).toEqual([]);
    expect(gs).toHaveLength(1);
  });

  it('reads the test hooks from the environment only when valid', () => {
    expect(commitTestHooks({})).toEqual({});
    expect(
      commitTestHooks({ BITLEDGER_TEST_MAX_BATCH_RECORDS: '100', BITLEDGER_TEST_PAUSE_AFTER_BATCH_MS: '20' }),
    ).toEqual({ maxBatchRecords: 100, pauseAfterBatchMs: 20 });
    expect(
      commitTestHooks({ BITLEDGER_TEST_MAX_BATCH_RECORDS: '0', BITLEDGER_TEST_PAUSE_AFTER_BATCH_MS: 'x' }),
    ).toEqual({});
  });
});

describe('CommitQueue batches against the log', () => {
  it('writes a group larger than the limit as one batch, with its meta, and sequences stay contiguous', async () => {
    dir = tempDir();
    const log = await EventLog.open(dir, { fsync: 'always', logger: silent });
    const appends: number[] = [];
    const spy = {
      append: async (records: Parameters<EventLog['append']>[0], meta?: Parameters<EventLog['append']>[1]) => {
        appends.push(records.length);
        return log.append(records, meta);
      },
    };
    const q = new CommitQueue(
      spy,
      log.lastSeq,
      (e) => {
        throw e;
      },
      { maxBatchRecords: 10 },
    );
    const seqs: number[] = [];
    const stageGroup = (n: number, meta?: string): void => {
      for (let i = 0; i < n; i++) seqs.push(q.stage({ type: 5, payload: Buffer.from(`g${n}-${i}`) }));
      if (meta !== undefined) q.stageMeta(meta, Buffer.from(String(n)));
      q.endGroup(true);
    };
    stageGroup(4);
    stageGroup(25, 'big'); // over the limit: alone, whole
    stageGroup(3);
    stageGroup(5, 'small');
    await q.drain();
    expect(appends).toEqual([4, 25, 8]);
    expect(seqs).toEqual(Array.from({ length: 37 }, (_, i) => i + 1));
    expect(q.durableSeq).toBe(37);
    expect(Buffer.from((await log.getMeta('big'))!).toString()).toBe('25');
    expect(Buffer.from((await log.getMeta('small'))!).toString()).toBe('5');
    let n = 0;
    for await (const r of log.read(1)) expect(r.seq).toBe(++n);
    expect(n).toBe(37);
    await log.close();
  });

  it('does not write an open group until it ends', async () => {
    dir = tempDir();
    const log = await EventLog.open(dir, { fsync: 'always', logger: silent });
    const q = new CommitQueue(
      log,
      log.lastSeq,
      (e) => {
        throw e;
      },
      { maxBatchRecords: 2 },
    );
    q.stage({ type: 5, payload: Buffer.from('a') });
    q.endGroup(true);
    const first = q.whenDurable(1);
    q.stage({ type: 5, payload: Buffer.from('b') });
    q.stage({ type: 5, payload: Buffer.from('c') });
    q.stage({ type: 5, payload: Buffer.from('d') });
    await first;
    await new Promise((r) => setTimeout(r, 20));
    expect(log.lastSeq).toBe(1); // b..d are one open group: nothing of it is written
    const rest = q.whenDurable(4);
    q.endGroup(true);
    await rest;
    expect(log.lastSeq).toBe(4);
    await log.close();
  });
});

describe('CommitQueue: groups written without their own sync', () => {
  it('syncs a batch when any of its groups asks for it, and only then', async () => {
    const appends: { records: number; sync: boolean | undefined }[] = [];
    let last = 0;
    let release: () => void = () => undefined;
    let held: Promise<void> | undefined = new Promise<void>((r) => (release = r));
    const q = new CommitQueue(
      {
        async append(records, _meta, opts) {
          // The first append waits, so the groups staged meanwhile go into the next batch together.
          if (held !== undefined) await held;
          appends.push({ records: records.length, sync: opts?.sync });
          const firstSeq = last + 1;
          last += records.length;
          return { firstSeq, lastSeq: last, bytes: 0 };
        },
      },
      0,
      (e) => {
        throw e;
      },
    );
    const stage = (sync: boolean): Promise<void> => {
      q.stage({ type: 5, payload: Buffer.from('x') });
      return q.whenGroupDurable(q.endGroup(sync));
    };
    const first = stage(false); // alone in the first batch, held
    const unsynced = [stage(false), stage(false)];
    const mixed = [stage(false), stage(true)];
    held = undefined;
    release();
    await Promise.all([first, ...unsynced, ...mixed]);
    // The four groups closed while the first batch was held went into one batch: one asked.
    expect(appends).toEqual([
      { records: 1, sync: false },
      { records: 4, sync: true },
    ]);
    appends.length = 0;
    await stage(false);
    expect(appends).toEqual([{ records: 1, sync: false }]);
  });
});
