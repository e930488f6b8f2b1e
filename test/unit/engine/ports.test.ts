// The engine's ports against the real LevelDB log and snapshot files: a follower sees only
// durable records, a retention hold keeps the log until released, and a cursor write lands in
// the batch of the events staged with it.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/engine/engine.js';
import { testEngine } from '../../helpers/test-engine.js';
import type { LogRecord } from '../../../src/engine/ports.js';
import { Holder } from '../../../src/state/holder.js';
import { EventLog, SnapshotStore } from '../../../src/storage/index.js';
import { removeDir, tempDir } from '../../helpers/temp.js';

const silent = pino({ level: 'silent' });
let dir = '';
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
  removeDir(dir);
});

async function openEngine(): Promise<Engine> {
  dir = tempDir();
  const log = await EventLog.open(dir, { fsync: 'always', logger: silent });
  close = () => log.close();
  const snapshots = await SnapshotStore.open(dir, silent);
  return testEngine(new Holder(), log, snapshots, silent);
}

/** One write of `n` IndexCreated events (names i<start>.. so they never collide). */
function createIndexes(engine: Engine, start: number, n: number): Promise<void> {
  return engine.commit({
    decide: (_h, sink) => {
      for (let i = start; i < start + n; i++)
        sink.emit({ type: 'IndexCreated', index: `i${i}`, options: { keys: false, trackExistence: false } });
    },
  });
}

async function readAll(engine: Engine, from: number): Promise<number[]> {
  const seqs: number[] = [];
  for await (const r of engine.committedLog.read(from) as AsyncIterable<LogRecord>) seqs.push(r.seq);
  return seqs;
}

describe('Engine ports', () => {
  it('CommittedLog: durable listeners, ranged reads up to the durable sequence, unsubscribe', async () => {
    const engine = await openEngine();
    const seen: number[] = [];
    const off = engine.committedLog.onDurable((seq) => seen.push(seq));
    await createIndexes(engine, 0, 3);
    expect(engine.committedLog.durableSeq).toBe(3);
    expect(seen.at(-1)).toBe(3);
    expect(await readAll(engine, 1)).toEqual([1, 2, 3]);
    expect(await readAll(engine, 2)).toEqual([2, 3]);
    // Staged but not yet durable: applied in memory, invisible to followers.
    const pending = createIndexes(engine, 3, 2);
    expect(engine.appliedSeq).toBe(5);
    expect(await readAll(engine, 1)).toEqual([1, 2, 3]);
    await pending;
    expect(await readAll(engine, 4)).toEqual([4, 5]);
    off();
    await createIndexes(engine, 5, 1);
    expect(seen.at(-1)).toBe(5);
  });

  it('CommittedLog.hold keeps records across snapshots until released', async () => {
    const engine = await openEngine();
    let keepFrom = 2;
    const hold = engine.committedLog.hold('test-follower', () => keepFrom);
    for (let i = 0; i < 4; i++) {
      await createIndexes(engine, i * 10, 5);
      await engine.snapshots.take();
    }
    expect(engine.committedLog.firstRetainedSeq).toBe(2);
    keepFrom = 7; // the holder moves its hold forward
    await createIndexes(engine, 100, 1);
    await engine.snapshots.take();
    expect(engine.committedLog.firstRetainedSeq).toBe(7);
    hold.release();
    await createIndexes(engine, 200, 1);
    await engine.snapshots.take();
    // Without holds, the log since the previous snapshot is kept (two snapshots retained).
    const snaps = await engine.snapshots.list();
    expect(snaps).toEqual([22, 21]);
    expect(engine.committedLog.firstRetainedSeq).toBe(22);
    expect(engine.snapshots.stats.lastSeq).toBe(22);
  });

  it('CursorStore.get reads a position committed with the events emitted with it', async () => {
    const engine = await openEngine();
    await engine.commit({
      decide: (_h, sink) =>
        sink.emit({ type: 'IndexCreated', index: 'a', options: { keys: false, trackExistence: false } }),
      cursors: [{ key: 'consumer', value: Buffer.from('at-1') }],
    });
    expect(engine.committedLog.durableSeq).toBe(1);
    expect(Buffer.from((await engine.cursors.get('consumer'))!).toString()).toBe('at-1');
    expect(await engine.cursors.get('other')).toBeUndefined();
  });
});
