// Group commit against the real LevelDB log: concurrent writers share synced batches, every
// waiter is released only after its records are durable, and sequences stay contiguous.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { CommitQueue } from '../../../src/engine/commit-queue.js';
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
    await expect(q.whenDurable(seq)).rejects.toThrow();
    expect(fatal).toHaveLength(1);
    expect(() => q.stage({ type: 5, payload: Buffer.from('y') })).toThrow();
  });
});
