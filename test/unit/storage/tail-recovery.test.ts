// Damage is injected by rewriting values through LevelDB directly: LevelDB discards torn writes
// of its own WAL, so what reaches us is a record with a bad envelope or CRC.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventLog, LogCorruptionError } from '../../../src/storage/index.js';
import { WARN, bytes, captureLogger, collect, rawLogKey, tempDir, text, withRawDb } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  const log = await EventLog.open(dir, { fsync: 'always', logger: captureLogger().logger });
  await log.append(Array.from({ length: 5 }, (_, i) => ({ type: 7, payload: bytes(`payload-${i + 1}`) })));
  await log.close();
});
afterEach(async () => {
  await cleanup();
});

async function damage(seq: number, fn: (value: Buffer) => Buffer): Promise<void> {
  await withRawDb(dir, async (db) => {
    const value = await db.get(rawLogKey(seq));
    await db.put(rawLogKey(seq), fn(Buffer.from(value!)), { sync: true });
  });
}

const flip =
  (at: number) =>
  (v: Buffer): Buffer => {
    v[at] ^= 0x10;
    return v;
  };

async function expectTruncatedTail(lastSeq: number, dropped: number): Promise<void> {
  const { logger, lines } = captureLogger();
  const log = await EventLog.open(dir, { fsync: 'always', logger });
  expect(log.lastSeq).toBe(lastSeq);
  const warn = lines.find((l) => l.level === WARN);
  expect(warn).toMatchObject({ dropped, lastSeq, firstDroppedSeq: lastSeq + 1 });
  expect(warn!.msg).toContain(`after sequence ${lastSeq}`);
  expect((await collect(log.read(1))).map((r) => r.seq)).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
  // Usable: the next append reuses the dropped sequence.
  expect(await log.append([{ type: 7, payload: bytes('again') }])).toMatchObject({ firstSeq: lastSeq + 1 });
  expect(text((await collect(log.read(lastSeq + 1)))[0].payload)).toBe('again');
  await log.close();
  // And the drop was durable: reopening finds nothing more to drop.
  const { logger: quiet, lines: quietLines } = captureLogger();
  const again = await EventLog.open(dir, { fsync: 'always', logger: quiet });
  expect(again.lastSeq).toBe(lastSeq + 1);
  expect(quietLines.filter((l) => l.level >= WARN)).toEqual([]);
  await again.close();
}

describe('tail recovery at open', () => {
  it('(a) drops a last record whose value is truncated', async () => {
    await damage(5, (v) => v.subarray(0, 8));
    await expectTruncatedTail(4, 1);
  });

  it('(a) drops a last record truncated inside its envelope header', async () => {
    await damage(5, (v) => v.subarray(0, 3));
    await expectTruncatedTail(4, 1);
  });

  it('(b) drops a last record with a flipped payload byte', async () => {
    await damage(5, flip(9));
    await expectTruncatedTail(4, 1);
  });

  it('drops several bad records at the end, down to the last valid one', async () => {
    await damage(4, flip(2)); // CRC field
    await damage(5, flip(0)); // version byte
    await expectTruncatedTail(3, 2);
  });
});

describe('corruption inside the committed range', () => {
  it('(c) a flipped byte in a middle record fails read() naming the sequence', async () => {
    await damage(3, flip(7));
    const log = await EventLog.open(dir, { fsync: 'always', logger: captureLogger().logger });
    expect(log.lastSeq).toBe(5); // not a torn tail: nothing dropped
    const seen: number[] = [];
    const err = await (async () => {
      try {
        for await (const r of log.read(1)) seen.push(r.seq);
      } catch (e) {
        return e;
      }
    })();
    expect(seen).toEqual([1, 2]);
    expect(err).toBeInstanceOf(LogCorruptionError);
    expect((err as LogCorruptionError).seq).toBe(3);
    expect((err as Error).message).toMatch(/sequence 3: CRC32C mismatch.*restore/is);
    await log.close();
  });

  it('a value moved to another key is detected (the CRC covers the sequence)', async () => {
    await withRawDb(dir, async (db) => {
      await db.put(rawLogKey(2), (await db.get(rawLogKey(4)))!, { sync: true });
    });
    const log = await EventLog.open(dir, { fsync: 'always', logger: captureLogger().logger });
    await expect(collect(log.read(1))).rejects.toMatchObject({ name: 'LogCorruptionError', seq: 2 });
    await log.close();
  });

  it('a gap in the middle fails read()', async () => {
    await withRawDb(dir, (db) => db.del(rawLogKey(3), { sync: true }));
    const log = await EventLog.open(dir, { fsync: 'always', logger: captureLogger().logger });
    await expect(collect(log.read(1))).rejects.toThrow(/sequence 3: record 3 is missing \(the next record is 4\)/);
    await expect(collect(log.read(3))).rejects.toMatchObject({ seq: 3 });
    expect((await collect(log.read(4))).map((r) => r.seq)).toEqual([4, 5]);
    await log.close();
  });

  it('missing records at the end of a requested range fail read()', async () => {
    const log = await EventLog.open(dir, { fsync: 'always', logger: captureLogger().logger });
    await log.close();
    await withRawDb(dir, async (db) => {
      await db.del(rawLogKey(3), { sync: true });
      await db.del(rawLogKey(4), { sync: true });
    });
    const again = await EventLog.open(dir, { fsync: 'always', logger: captureLogger().logger });
    await expect(collect(again.read(1, 4))).rejects.toThrow(/records 3\.\.4 are missing/);
    await again.close();
  });

  it('truncateAfter is the way past it when losing the suffix is accepted', async () => {
    await damage(3, flip(7));
    const log = await EventLog.open(dir, { fsync: 'always', logger: captureLogger().logger });
    await log.truncateAfter(2);
    expect((await collect(log.read(1))).map((r) => r.seq)).toEqual([1, 2]);
    await log.close();
  });
});
