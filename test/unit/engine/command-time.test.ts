// Issue 22, history in cluster mode: the state as of a time T is each partition as of its last
// command stamped at or before T. Commands are written through a real engine (LevelDB log) the
// way the cluster applier writes them — each one commit closed by its CommandApplied — with partitions interleaved and times out of order, and commandStateAt(T) must hold
// exactly the commands of each partition up to its first one stamped after T, from the empty
// state or from a snapshot, and see commands applied after it was first built.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/domain/errors.js';
import { defaultFieldOptions } from '../../../src/domain/types.js';
import { bootstrap } from '../../../src/engine/bootstrap.js';
import { Engine } from '../../../src/engine/engine.js';
import { HistoryRangeError } from '../../../src/engine/history.js';
import type { Event } from '../../../src/events/types.js';
import type { ReadonlyHolder } from '../../../src/state/readonly.js';
import { EventLog, SnapshotStore } from '../../../src/storage/index.js';
import { removeDir, tempDir } from '../../helpers/temp.js';

const silent = pino({ level: 'silent' });
const SHARD = 1 << 20;
const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  for (const d of dirs.splice(0)) removeDir(d);
});

async function openEngine(): Promise<{ engine: Engine; log: EventLog }> {
  const dir = tempDir('bitledger-command-time-');
  dirs.push(dir);
  const log = await EventLog.open(dir, { fsync: 'always', logger: silent });
  const snapshots = await SnapshotStore.open(dir, silent);
  const { holder } = await bootstrap(log, snapshots, silent);
  const engine = new Engine(
    holder,
    log,
    snapshots,
    { snapshotEveryEvents: 1e9, snapshotEveryBytes: 1e15 },
    silent,
    (e) => {
      throw e;
    },
  );
  closers.push(async () => {
    await engine.stop();
    await log.close();
  });
  return { engine, log };
}

let offsets = 0;
/** One command as the applier runs it: its events in one commit, closed by its CommandApplied. */
async function command(
  engine: Engine,
  topic: string,
  partition: number,
  timeMs: number,
  events: Event[],
  offset = String(offsets++),
) {
  const applied = { type: 'CommandApplied', topic, partition, offset, position: offset, timeMs } as const;
  await engine.commit({
    origin: 'cluster',
    applied,
    decide: (_h, sink) => {
      for (const e of events) sink.emit(e);
    },
  });
}

/** Sets column `col` of shard `shard` in row 1 of f. */
const bit = (shard: number, col: number): Event => ({
  type: 'BitsSet',
  index: 'i',
  field: 'f',
  view: 'standard',
  shard,
  rows: [1],
  columns: [Uint32Array.of(col)],
});

const columns = (h: ReadonlyHolder): number[] => {
  const f = h.index('i')?.field('f')?.view('standard');
  if (f === undefined) return [];
  const out: number[] = [];
  for (const [shard, frag] of f.fragments)
    for (const c of frag.peekRow(1)?.toArray() ?? []) out.push(shard * SHARD + c);
  return out.sort((a, b) => a - b);
};

async function schema(engine: Engine): Promise<void> {
  await command(engine, 'meta', 0, 10, [
    { type: 'IndexCreated', index: 'i', options: { keys: false, trackExistence: false } },
    { type: 'FieldCreated', index: 'i', field: 'f', options: defaultFieldOptions('set') },
  ]);
}

describe('the cluster state as of a time', () => {
  it('holds each partition up to its first command stamped after T', async () => {
    const { engine } = await openEngine();
    await schema(engine);
    // Partition 0 holds shard 0, partition 1 shard 1; applied interleaved, times out of order.
    await command(engine, 'log', 0, 100, [bit(0, 1)]);
    await command(engine, 'log', 1, 300, [bit(1, 1)]);
    await command(engine, 'log', 0, 200, [bit(0, 2)]);
    await command(engine, 'log', 1, 150, [bit(1, 2)]); // after a command past 250: not in the state at 250
    await command(engine, 'log', 0, 260, [bit(0, 3)]);
    const at = async (t: number) => columns(await engine.history.commandStateAt(t));
    expect(await at(250)).toEqual([1, 2]);
    expect(await at(299)).toEqual([1, 2, 3]);
    expect(await at(350)).toEqual([1, 2, 3, SHARD + 1, SHARD + 2]);
    expect(await at(99)).toEqual([]);
    // Before the schema's command: no index at all.
    expect((await engine.history.commandStateAt(5)).index('i')).toBeUndefined();
    // The live state is untouched.
    expect(engine.peekApplied(columns)).toEqual([1, 2, 3, SHARD + 1, SHARD + 2]);
  });

  it('starts from a snapshot whose partitions all stand at or before T, and from nothing otherwise', async () => {
    const { engine, log } = await openEngine();
    await schema(engine);
    await command(engine, 'log', 0, 100, [bit(0, 1)]);
    await command(engine, 'log', 1, 300, [bit(1, 1)]);
    const snap = await engine.snapshots.take();
    await log.releaseUpTo(snap); // the log before the snapshot is gone: it must be the base
    await command(engine, 'log', 0, 400, [bit(0, 2)]);
    expect(columns(await engine.history.commandStateAt(350))).toEqual([1, SHARD + 1]);
    expect(columns(await engine.history.commandStateAt(450))).toEqual([1, 2, SHARD + 1]);
    // 250 needs a state before the snapshot (partition 1 is at 300 there): outside the history.
    await expect(engine.history.commandStateAt(250)).rejects.toBeInstanceOf(HistoryRangeError);
  });

  it('keeps a state while later commands leave it unchanged, and rebuilds it when one belongs to it', async () => {
    const { engine } = await openEngine();
    await schema(engine);
    await command(engine, 'log', 0, 100, [bit(0, 1)]);
    await command(engine, 'log', 0, 500, [bit(0, 9)]); // closes partition 0 for T = 300
    const first = await engine.history.commandStateAt(300);
    await command(engine, 'log', 0, 200, [bit(0, 2)]); // partition 0 is closed: no change
    expect(await engine.history.commandStateAt(300)).toBe(first);
    await command(engine, 'log', 1, 250, [bit(1, 5)]); // a command of T's state applied late
    const again = await engine.history.commandStateAt(300);
    expect(again).not.toBe(first);
    expect(columns(again)).toEqual([1, SHARD + 5]);
    expect(columns(first)).toEqual([1]); // a state a query may still read is never changed
  });

  it('refuses a time before a partition this node installed from a newer snapshot', async () => {
    const { engine } = await openEngine();
    await schema(engine);
    await command(engine, 'log', 0, 100, [bit(0, 1)]);
    // Partition 1's shards installed from another holder's snapshot whose newest command is at 400.
    await command(engine, 'log', 1, 400, [bit(1, 1)], '');
    const err = await engine.history.commandStateAt(300).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('unavailable');
    expect(columns(await engine.history.commandStateAt(450))).toEqual([1, SHARD + 1]);
  });
});
