// Issue 2, durable core: snapshot write and cold replay rates for a log of ≥ 1M small events,
// against raw classic-level iteration of the same log keys in the same run. The log is built
// in-process with the engine's event codec and EventLog.append, unsynced (not what is measured).
import { pino } from 'pino';
import { Engine } from '../src/engine/engine.js';
import { bootstrap } from '../src/engine/bootstrap.js';
import type { SnapshotFiles } from '../src/engine/ports.js';
import { defaultFieldOptions } from '../src/domain/types.js';
import { encodeEvent, type EncodedEvent } from '../src/events/codec.js';
import type { Event } from '../src/events/types.js';
import { RoaringBitmap32 } from '../src/roaring/bitmap.js';
import type { Holder } from '../src/state/holder.js';
import { EventLog, SnapshotStore } from '../src/storage/index.js';
import { openRaw, rawIterateLog, type LogScan } from './lib/raw-level.js';
import type { Reporter } from './lib/report.js';
import { removeDir, tempDir } from './lib/server-child.js';
import { MB, now } from './lib/stats.js';

const EVENTS = Number(process.env.BENCH_REPLAY_EVENTS ?? 1_000_000);
const EVENTS_PER_BATCH = 5000;
const PROBE_EVENTS = 100_000;
const MAX_REPLAY_MS = 30_000;
/** Every n-th event is a ValuesSet (0: none), to split replay cost by event type. */
const VALUES_EVERY = Number(process.env.BENCH_REPLAY_VALUES_EVERY ?? 5);
const logger = pino({ level: 'silent' });

/** Replay without a snapshot: the store lists none. */
const NO_SNAPSHOTS: SnapshotFiles = {
  write: () => Promise.reject(new Error('not used')),
  list: () => Promise.resolve([]),
  infos: () => Promise.resolve([]),
  read: () => Promise.reject(new Error('not used')),
  prune: () => Promise.resolve([]),
};

export async function runLogReplay(r: Reporter): Promise<void> {
  r.begin('replay', `snapshot and replay of a ${EVENTS.toLocaleString('en-US')}-event log (issue 2)`);
  const dir = tempDir('replay');
  try {
    const buildMs = await buildLog(dir);
    const mix =
      VALUES_EVERY > 0
        ? `1 in ${VALUES_EVERY} a ValuesSet of 4 values, the rest BitsSet of 4 bits`
        : 'all BitsSet of 4 bits';
    r.note(`log built in ${(buildMs / 1000).toFixed(1)} s (${mix}; appended unsynced)`);
    const raw = await rawScan(dir, PROBE_EVENTS); // the OS cache is warm from the build, for it and the replay
    r.note(
      `log: ${raw.records.toLocaleString('en-US')} records, ${(raw.bytes / MB).toFixed(1)} MB (key + envelope + payload)`,
    );
    // A prefix first: a slow replay of the whole log would not fit the run's time budget.
    let run = await replay(dir, PROBE_EVENTS);
    let bytes = raw.prefixBytes;
    const projectedMs = (run.ms * raw.records) / run.events;
    if (projectedMs <= MAX_REPLAY_MS || process.env.BENCH_REPLAY_FULL === '1') {
      run = await replay(dir);
      bytes = raw.bytes;
      if (run.events !== raw.records) throw new Error(`replayed ${run.events} events but the log holds ${raw.records}`);
    } else {
      r.note(
        `replay measured on the first ${run.events.toLocaleString('en-US')} events only: the whole log would take ~${(projectedMs / 1000).toFixed(0)} s (BENCH_REPLAY_FULL=1 replays it all)`,
      );
    }
    const rawRate = raw.records / (raw.ms / 1000);
    const replayRate = run.events / (run.ms / 1000);
    r.figure('raw classic-level iteration', rawRate, 'events/s');
    r.figure('raw classic-level iteration', raw.bytes / MB / (raw.ms / 1000), 'MB/s');
    r.figure('cold replay (bootstrap, no snapshot)', replayRate, 'events/s');
    r.figure('cold replay (bootstrap, no snapshot)', bytes / MB / (run.ms / 1000), 'MB/s');
    r.figure('cold replay, per CPU-second (user + system)', run.events / (run.cpuMs / 1000), 'events/s');
    r.figure('replay / raw iteration throughput', replayRate / rawRate, '×', {
      op: '>=',
      value: 0.5,
      source: 'issue 2',
    });
    await snapshotFigures(r, dir, run.holder, run.events);
  } finally {
    removeDir(dir);
  }
}

interface Replay {
  holder: Holder;
  events: number;
  ms: number;
  /** Process CPU time (user + system): on a loaded machine it moves far less than wall time. */
  cpuMs: number;
}

/** Cold bootstrap of the log (up to `toSeq`) with no snapshot. */
async function replay(dir: string, toSeq = Infinity): Promise<Replay> {
  const log = await EventLog.open(dir, { fsync: 'never', logger });
  try {
    const t0 = now();
    const c0 = process.cpuUsage();
    const boot = await bootstrap(log, NO_SNAPSHOTS, logger, toSeq);
    const cpu = process.cpuUsage(c0);
    return { holder: boot.holder, events: boot.report.replayed, ms: now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
  } finally {
    await log.close();
  }
}

/** Raw iteration of the whole log; also the bytes of its first `prefix` records. */
async function rawScan(dir: string, prefix: number): Promise<LogScan & { prefixBytes: number }> {
  const db = await openRaw(dir);
  let seen = 0;
  let prefixBytes = 0;
  try {
    const scan = await rawIterateLog(db, (k, v) => {
      if (seen++ < prefix) prefixBytes += k.length + v.length;
    });
    return { ...scan, prefixBytes };
  } finally {
    await db.close();
  }
}

async function snapshotFigures(r: Reporter, dir: string, holder: Holder, events: number): Promise<void> {
  const log = await EventLog.open(dir, { fsync: 'never', logger });
  try {
    const snapshots = await SnapshotStore.open(dir, logger);
    const engine = new Engine(
      holder,
      log,
      snapshots,
      { snapshotEveryEvents: Infinity, snapshotEveryBytes: Infinity },
      logger,
      fail,
    );
    const t0 = now();
    await engine.snapshot();
    const ms = now() - t0;
    const bytes = engine.snapshots.stats.lastBytes;
    r.figure('Engine.snapshot() write (log events covered)', events / (ms / 1000), 'events/s');
    r.figure('Engine.snapshot() write', bytes / MB / (ms / 1000), 'MB/s');
    r.note(`snapshot: ${(bytes / MB).toFixed(1)} MB in ${ms.toFixed(0)} ms`);
    const t1 = now();
    const boot = await bootstrap(log, snapshots, logger, holder.appliedSeq);
    const loadMs = now() - t1;
    r.figure('bootstrap from that snapshot (log events covered)', events / (loadMs / 1000), 'events/s');
    r.figure('bootstrap from that snapshot', bytes / MB / (loadMs / 1000), 'MB/s');
    if (boot.report.replayed !== 0)
      throw new Error(`bootstrap after the snapshot replayed ${boot.report.replayed} events`);
  } finally {
    await log.close();
  }
}

function fail(err: Error): void {
  throw err;
}

/**
 * Appends EVENTS small encoded events straight to the log (the engine's codec and EventLog, but
 * no apply: building must not cost what replay costs); resolves with the build time.
 */
export async function buildLog(dir: string): Promise<number> {
  const t0 = now();
  const log = await EventLog.open(dir, { fsync: 'never', logger });
  try {
    await log.append([
      encodeEvent({ type: 'IndexCreated', index: 'r', options: { keys: false, trackExistence: false } }),
      encodeEvent({ type: 'FieldCreated', index: 'r', field: 'f', options: defaultFieldOptions('set') }),
      encodeEvent({ type: 'FieldCreated', index: 'r', field: 'v', options: defaultFieldOptions('int') }),
    ]);
    // Every event distinct, so the state (and the snapshot) is as big as the log implies.
    for (let done = 3; done < EVENTS; ) {
      const n = Math.min(EVENTS_PER_BATCH, EVENTS - done);
      const batch: EncodedEvent[] = [];
      for (let i = done; i < done + n; i++) batch.push(encodeEvent(smallEvent(i)));
      await log.append(batch);
      done += n;
    }
  } finally {
    await log.close();
  }
  return now() - t0;
}

/** Event i: every VALUES_EVERY-th a ValuesSet of 4 values (17-bit magnitudes), else a BitsSet of 4 bits. */
function smallEvent(i: number): Event {
  const shard = i % 64;
  const base = (i * 7919) % (1 << 20);
  const cols = Uint32Array.of(base, (base + 13) & 0xfffff, (base + 1031) & 0xfffff, (base + 65537) & 0xfffff);
  if (VALUES_EVERY > 0 && i % VALUES_EVERY === 0)
    return {
      type: 'ValuesSet',
      index: 'r',
      field: 'v',
      shard,
      columns: cols,
      values: BigInt64Array.of(BigInt(i % 100_000), 7n, -3n, 1000n),
    };
  return {
    type: 'BitsSet',
    index: 'r',
    field: 'f',
    view: 'standard',
    shard,
    rows: [i % 100],
    columns: [new RoaringBitmap32(cols)],
  };
}
