// The engine against a real LevelDB log and real snapshot files in a temp directory, through its
// public methods only (commit, read, readAsync, snapshot, stop) plus bootstrap: what is
// acknowledged is durable, what a failed decide emitted is kept (and a DomainError after an emit
// is asserted), replicas refuse local writes, positions ride in their events' batch, snapshots
// release the log, and a restart rebuilds the same state.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/domain/errors.js';
import { defaultFieldOptions } from '../../../src/domain/types.js';
import { bootstrap } from '../../../src/engine/bootstrap.js';
import { Engine, type EngineOptions } from '../../../src/engine/engine.js';
import type { Decider, LogStore } from '../../../src/engine/ports.js';
import type { Event, EventSink } from '../../../src/events/types.js';
import { stateDigest } from '../../../src/state/digest.js';
import type { ReadonlyHolder } from '../../../src/state/readonly.js';
import { AssertionError } from '../../../src/util/assert.js';
import { EventLog, SnapshotStore } from '../../../src/storage/index.js';
import { removeDir, tempDir } from '../../helpers/temp.js';

const silent = pino({ level: 'silent' });
const NO_AUTO_SNAPSHOT: EngineOptions = { snapshotEveryEvents: 1e9, snapshotEveryBytes: 1e15 };

interface Opened {
  engine: Engine;
  log: EventLog;
  snapshots: SnapshotStore;
  fatal: Error[];
  close(): Promise<void>;
}

const dirs: string[] = [];
const open: Opened[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close().catch(() => undefined);
  for (const d of dirs.splice(0)) removeDir(d);
});

function newDir(): string {
  const d = tempDir('bitledger-engine-');
  dirs.push(d);
  return d;
}

/** The composition app.ts does, reduced to storage + bootstrap + engine; `wrap` may gate the log. */
async function openEngine(
  dir: string,
  options: EngineOptions = NO_AUTO_SNAPSHOT,
  wrap: (log: EventLog) => LogStore = (l) => l,
): Promise<Opened> {
  const log = await EventLog.open(dir, { fsync: 'always', logger: silent });
  const snapshots = await SnapshotStore.open(dir, silent);
  const { holder } = await bootstrap(log, snapshots, silent);
  const fatal: Error[] = [];
  const engine = new Engine(holder, wrap(log), snapshots, options, silent, (e) => fatal.push(e));
  const o: Opened = {
    engine,
    log,
    snapshots,
    fatal,
    async close() {
      await engine.stop();
      await log.close();
    },
  };
  open.push(o);
  return o;
}

async function reopen(o: Opened, dir: string): Promise<Opened> {
  await o.close();
  open.splice(open.indexOf(o), 1);
  return openEngine(dir);
}

const createIndex: Event = { type: 'IndexCreated', index: 'i', options: { keys: false, trackExistence: true } };
const createField: Event = { type: 'FieldCreated', index: 'i', field: 'f', options: defaultFieldOptions('set') };
const setBits = (row: number, ...cols: number[]): Event => ({
  type: 'BitsSet',
  index: 'i',
  field: 'f',
  view: 'standard',
  shard: 0,
  rows: [row],
  columns: [Uint32Array.from(cols)],
});
const emitAll =
  (...events: Event[]) =>
  (_h: ReadonlyHolder, sink: EventSink): void => {
    for (const e of events) sink.emit(e);
  };
const columnsOf = (h: ReadonlyHolder, row: number): number[] => [
  ...(h.index('i')?.field('f')?.view('standard')?.fragment(0)?.rows.get(row) ?? []),
];

/** A log whose appends wait for `open()`: shows who waits for durability. */
function gatedLog(log: EventLog): { store: LogStore; open: () => void; appends: () => number } {
  let release: () => void = () => undefined;
  let gate = new Promise<void>((r) => (release = r));
  let appends = 0;
  const store = new Proxy(log, {
    get(target, prop) {
      if (prop === 'append')
        return async (...args: Parameters<EventLog['append']>) => {
          appends++;
          await gate;
          return target.append(...args);
        };
      return Reflect.get(target, prop, target);
    },
  });
  return {
    store,
    open: () => {
      release();
      gate = Promise.resolve();
    },
    appends: () => appends,
  };
}

const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
};

describe('Engine.commit', () => {
  it('applies at once but answers (writes and reads) only once the log append is durable', async () => {
    const dir = newDir();
    let gate: ReturnType<typeof gatedLog> | undefined;
    const o = await openEngine(dir, NO_AUTO_SNAPSHOT, (log) => (gate = gatedLog(log)).store);
    const g = gate!;
    const write = o.engine.commit({ decide: emitAll(createIndex, createField, setBits(1, 5)) });
    const read = o.engine.read((h) => columnsOf(h, 1));
    const readAsync = o.engine.readAsync((h) => Promise.resolve(columnsOf(h, 1)));
    expect(await settled(write)).toBe(false);
    expect(await settled(read)).toBe(false);
    expect(await settled(readAsync)).toBe(false);
    expect(g.appends()).toBe(1);
    expect(o.log.lastSeq).toBe(0); // nothing durable yet
    g.open();
    await write;
    expect(o.log.lastSeq).toBe(3);
    expect(await read).toEqual([5]); // the read saw the applied write, answered after it was durable
    expect(await readAsync).toEqual([5]);
  });

  it('returns what decide returns; concurrent writes share batches and all land in the log', async () => {
    const dir = newDir();
    const o = await openEngine(dir);
    await o.engine.commit({ decide: emitAll(createIndex, createField) });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, c) =>
        o.engine.commit({ decide: (_h, sink) => (sink.emit(setBits(2, c)), c * 2) }),
      ),
    );
    expect(results).toEqual(Array.from({ length: 50 }, (_, c) => c * 2));
    expect(o.log.lastSeq).toBe(52);
    const again = await reopen(o, dir);
    expect(await again.engine.read((h) => columnsOf(h, 2))).toEqual(Array.from({ length: 50 }, (_, c) => c));
  });

  it('keeps and commits what decide emitted before throwing, and rethrows its error', async () => {
    const dir = newDir();
    const o = await openEngine(dir);
    await o.engine.commit({ decide: emitAll(createIndex, createField) });
    const failing = o.engine.commit({
      decide: (_h, sink) => {
        sink.emit(setBits(3, 7));
        throw new Error('decider broke half way');
      },
    });
    await expect(failing).rejects.toThrow('decider broke half way');
    expect(o.log.lastSeq).toBe(3); // durable before the error was answered
    expect(await o.engine.read((h) => columnsOf(h, 3))).toEqual([7]);
    const live = stateDigest(await o.engine.read((h) => h));
    const again = await reopen(o, dir);
    expect(stateDigest(await again.engine.read((h) => h))).toBe(live); // memory and log agree
  });

  it('asserts that a DomainError means nothing was emitted: one after an emit is an AssertionError', async () => {
    const dir = newDir();
    const o = await openEngine(dir);
    await o.engine.commit({ decide: emitAll(createIndex, createField) });
    const failing = o.engine.commit({
      decide: (_h, sink) => {
        sink.emit(setBits(3, 7));
        throw new DomainError('bad_request', 'second half invalid');
      },
    });
    const err = await failing.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AssertionError);
    expect((err as Error).message).toMatch(/emitted events and then refused the request.*second half invalid/);
    expect(o.log.lastSeq).toBe(3); // still committed: memory and log agree
  });

  it('logs nothing when decide throws before emitting', async () => {
    const dir = newDir();
    const o = await openEngine(dir);
    await o.engine.commit({ decide: emitAll(createIndex) });
    await expect(
      o.engine.commit({
        decide: () => {
          throw new DomainError('bad_request', 'rejected up front');
        },
      }),
    ).rejects.toThrow('rejected up front');
    expect(o.log.lastSeq).toBe(1);
  });

  it('commits cursors in the batch of the events emitted with them, or alone when there are none', async () => {
    const dir = newDir();
    let gate: ReturnType<typeof gatedLog> | undefined;
    const o = await openEngine(dir, NO_AUTO_SNAPSHOT, (log) => (gate = gatedLog(log)).store);
    const g = gate!;
    g.open();
    await o.engine.commit({ decide: emitAll(createIndex), cursors: [{ key: 'cursor', value: Uint8Array.of(4, 2) }] });
    expect(g.appends()).toBe(1); // one batch: the event and its position
    expect(await o.log.getMeta('cursor')).toEqual(Buffer.from([4, 2]));
    // A decider that emits nothing: the position is a group of its own, durable when answered.
    await o.engine.commit({ decide: () => 'nothing', cursors: [{ key: 'cursor', value: Uint8Array.of(5) }] });
    expect(await o.log.getMeta('cursor')).toEqual(Buffer.from([5]));
    await o.engine.commit({ cursors: [{ key: 'cursor', value: null }] });
    expect(await o.log.getMeta('cursor')).toBeUndefined();
    // A refused decide commits nothing, not even its position.
    await expect(
      o.engine.commit({
        decide: () => {
          throw new DomainError('bad_request', 'no');
        },
        cursors: [{ key: 'cursor', value: Uint8Array.of(6) }],
      }),
    ).rejects.toThrow('no');
    await o.engine.commit({ decide: () => undefined });
    expect(await o.log.getMeta('cursor')).toBeUndefined();
    expect(o.log.lastSeq).toBe(1);
  });

  it('a lazy cursor commit rides in the next batch instead of writing one', async () => {
    const dir = newDir();
    let gate: ReturnType<typeof gatedLog> | undefined;
    const o = await openEngine(dir, NO_AUTO_SNAPSHOT, (log) => (gate = gatedLog(log)).store);
    const g = gate!;
    g.open();
    await o.engine.commit({ decide: emitAll(createIndex) });
    const ride = o.engine.commit({ cursors: [{ key: 'm', value: Uint8Array.of(1) }], origin: 'server', lazy: true });
    expect(await settled(ride)).toBe(false);
    expect(g.appends()).toBe(1);
    await o.engine.commit({ decide: emitAll(createField) });
    await ride;
    expect(g.appends()).toBe(2); // the position went with the next write's batch
    expect(await o.log.getMeta('m')).toEqual(Buffer.from([1]));
  });

  it('refuses local writes on a read-only engine (405) but takes replicated ones', async () => {
    const dir = newDir();
    const o = await openEngine(dir, { ...NO_AUTO_SNAPSHOT, readOnlyReason: 'replica of topic t' });
    const refused = await o.engine.commit({ decide: emitAll(createIndex) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe('method_not_allowed');
    expect((refused as DomainError).message).toBe('replica of topic t');
    expect(o.log.lastSeq).toBe(0);
    await o.engine.commit({ decide: emitAll(createIndex), origin: 'replica' });
    expect(o.log.lastSeq).toBe(1);
    await o.engine.commit({ decide: emitAll(createField), origin: 'cluster' });
    expect(o.log.lastSeq).toBe(2);
  });

  it('after a failed append refuses writes (503) and reports the failure once', async () => {
    const dir = newDir();
    const o = await openEngine(
      dir,
      NO_AUTO_SNAPSHOT,
      (log) =>
        new Proxy(log, {
          get: (t, p) => (p === 'append' ? () => Promise.reject(new Error('disk gone')) : Reflect.get(t, p, t)),
        }),
    );
    await expect(o.engine.commit({ decide: emitAll(createIndex) })).rejects.toThrow('disk gone');
    expect(o.fatal.map((e) => e.message)).toEqual(['disk gone']);
    const next = await o.engine.commit({ decide: emitAll(createField) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((next as DomainError).code).toBe('unavailable');
  });
});

describe('Engine.commit deciders', () => {
  it('see the state read-only: a decider that changes it does not compile (tsc checks the lines below)', () => {
    const mutate: Decider<void> = (h) => {
      // @ts-expect-error ReadonlyMap has no delete: a decider cannot drop an index
      h.indexes.delete('i');
      // @ts-expect-error a fragment is read-only: bits change only through apply()
      h.index('i')?.field('f')?.view('standard')?.fragment(0)?.addBits(1, Uint32Array.of(1));
      // @ts-expect-error the applied sequence is the engine's
      h.appliedSeq = 7;
    };
    expect(typeof mutate).toBe('function'); // never run: the check is the compiler's
  });
});

describe('Engine.stop', () => {
  it('makes staged writes durable, then refuses new ones; a restart has the same state', async () => {
    const dir = newDir();
    const o = await openEngine(dir);
    await o.engine.commit({ decide: emitAll(createIndex, createField) });
    const pending = Array.from({ length: 20 }, (_, c) => o.engine.commit({ decide: emitAll(setBits(4, c)) }));
    await o.engine.stop();
    await Promise.all(pending);
    expect(o.log.lastSeq).toBe(22);
    const refused = await o.engine.commit({ decide: emitAll(setBits(4, 99)) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((refused as DomainError).code).toBe('unavailable');
    expect((refused as DomainError).message).toMatch(/shutting down/);
    const live = stateDigest(await o.engine.read((h) => h));
    const again = await reopen(o, dir);
    expect(stateDigest(await again.engine.read((h) => h))).toBe(live);
    expect(await again.engine.read((h) => columnsOf(h, 4))).toEqual(Array.from({ length: 20 }, (_, c) => c));
  });
});

describe('Engine.snapshot', () => {
  it('writes a snapshot at the applied sequence; restart = snapshot + suffix = the same state', async () => {
    const dir = newDir();
    const o = await openEngine(dir);
    await o.engine.commit({ decide: emitAll(createIndex, createField, setBits(1, 1, 2, 3)) });
    expect(await o.engine.snapshot()).toBe(3);
    expect(await o.snapshots.list()).toEqual([3]);
    await o.engine.commit({ decide: emitAll(setBits(1, 4)) });
    const live = stateDigest(await o.engine.read((h) => h));
    const again = await reopen(o, dir);
    const { report } = await bootstrap(again.log, again.snapshots, silent);
    expect(report).toMatchObject({ snapshotSeq: 3, replayed: 1 });
    expect(stateDigest(await again.engine.read((h) => h))).toBe(live);
  });

  it('keeps two snapshots and releases the log up to the older one', async () => {
    const dir = newDir();
    const o = await openEngine(dir);
    await o.engine.commit({ decide: emitAll(createIndex, createField) });
    const seqs: number[] = [];
    for (let i = 0; i < 3; i++) {
      await o.engine.commit({ decide: emitAll(setBits(1, i), setBits(2, i)) });
      seqs.push(await o.engine.snapshot());
    }
    expect(seqs).toEqual([4, 6, 8]);
    expect(await o.snapshots.list()).toEqual([8, 6]); // newest first; 4 pruned
    expect(o.log.firstSeq).toBe(7); // log since the previous snapshot kept
    const live = stateDigest(await o.engine.read((h) => h));
    const again = await reopen(o, dir);
    expect(stateDigest(await again.engine.read((h) => h))).toBe(live);
  });

  it('snapshots by itself after snapshotEveryEvents events', async () => {
    const dir = newDir();
    const o = await openEngine(dir, { snapshotEveryEvents: 5, snapshotEveryBytes: 1e15 });
    await o.engine.commit({ decide: emitAll(createIndex, createField) });
    for (let c = 0; c < 4; c++) await o.engine.commit({ decide: emitAll(setBits(1, c)) });
    // The threshold was crossed by the last write: its snapshot is running or done.
    await o.engine.stop(); // waits for a running snapshot
    expect((await o.snapshots.list()).length).toBeGreaterThan(0);
  });
});
