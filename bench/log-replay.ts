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
import { RoaringBitmap32 } from '../src/state/fragment.js';
import { Holder } from '../src/state/holder.js';
import { EventLog, SnapshotStore } from '../src/storage/index.js';
import { openRaw, rawIterateLog, type LogScan } from './lib/raw-level.js';
import type { Reporter } from './lib/report.js';
import { removeDir, tempDir } from './lib/server-child.js';
import { MB, now } from './lib/stats.js';

const EVENTS = Number(process.env.BENCH_REPLAY_EVENTS ?? 1_000_000);
const EVENTS_PER_BATCH = 5000;
/** Every n-th event is a ValuesSet (0: none), to split replay cost by event type. */
const VALUES_EVERY = Number(process.env.BENCH_REPLAY_VALUES_EVERY ?? 5);
const logger = pino({ level: 'silent' });

/** Replay without a snapshot: the store lists none. */
const NO_SNAPSHOTS: SnapshotFiles = {
  write: () => Promise.reject(new Error('not used')),
  list: () => Promise.resolve([]),
  read: () => Promise.reject(new Error('not used')),
  prune: () => Promise.resolve([]),
};

export async function runLogReplay(r: Reporter): Promise<void> {
  r.begin('replay', `snapshot and replay of a ${EVENTS.toLocaleString('en-US')}-event log (issue 2)`);
  const dir = tempDir('replay');
  try {
    const buildMs = await buildLog(dir);
    const mix = VALUES_EVERY > 0 ? `1 in ${VALUES_EVERY} a ValuesSet of 4 values, the rest BitsSet of 4 bits` : 'all BitsSet of 4 bits';
    r.note(`log built in ${(buildMs / 1000).toFixed(1)} s (${mix}; appended unsynced)`);
    const raw1 = await rawScan(dir);
    const log = await EventLog.open(dir, { fsync: 'never', logger });
    let holder: Holder;
    let replayMs: number;
    try {
      const t0 = now();
      const boot = await bootstrap(log, NO_SNAPSHOTS, logger);
      replayMs = now() - t0;
      holder = boot.holder;
      if (boot.report.replayed !== raw1.records) throw new Error(`replayed ${boot.report.replayed} events but the log holds ${raw1.records}`);
    } finally {
      await log.close();
    }
    const raw2 = await rawScan(dir);
    const raw = raw1.ms <= raw2.ms ? raw1 : raw2; // the faster raw pass: a conservative ratio
    r.note(`log: ${raw.records.toLocaleString('en-US')} records, ${(raw.bytes / MB).toFixed(1)} MB (key + envelope + payload)`);
    r.figure('raw classic-level iteration', raw.records / (raw.ms / 1000), 'events/s');
    r.figure('raw classic-level iteration', raw.bytes / MB / (raw.ms / 1000), 'MB/s');
    r.figure('cold replay (bootstrap, no snapshot)', raw.records / (replayMs / 1000), 'events/s');
    r.figure('cold replay (bootstrap, no snapshot)', raw.bytes / MB / (replayMs / 1000), 'MB/s');
    r.figure('replay / raw iteration throughput', raw.ms / replayMs, '×', { op: '>=', value: 0.5, source: 'issue 2' });
    await snapshotFigures(r, dir, holder, raw.records);
  } finally {
    removeDir(dir);
  }
}

async function rawScan(dir: string): Promise<LogScan> {
  const db = await openRaw(dir);
  try {
    return await rawIterateLog(db);
  } finally {
    await db.close();
  }
}

async function snapshotFigures(r: Reporter, dir: string, holder: Holder, events: number): Promise<void> {
  const log = await EventLog.open(dir, { fsync: 'never', logger });
  try {
    const snapshots = await SnapshotStore.open(dir, logger);
    const engine = new Engine(holder, log, snapshots, { snapshotEveryEvents: Infinity, snapshotEveryBytes: Infinity }, logger, fail);
    const t0 = now();
    await engine.snapshot();
    const ms = now() - t0;
    const bytes = engine.snapshotStats.lastBytes;
    r.figure('Engine.snapshot() write (log events covered)', events / (ms / 1000), 'events/s');
    r.figure('Engine.snapshot() write', bytes / MB / (ms / 1000), 'MB/s');
    r.note(`snapshot: ${(bytes / MB).toFixed(1)} MB in ${ms.toFixed(0)} ms`);
    const t1 = now();
    const boot = await bootstrap(log, snapshots, logger);
    const loadMs = now() - t1;
    r.figure('bootstrap from that snapshot (log events covered)', events / (loadMs / 1000), 'events/s');
    r.figure('bootstrap from that snapshot', bytes / MB / (loadMs / 1000), 'MB/s');
    if (boot.report.replayed !== 0) throw new Error(`bootstrap after the snapshot replayed ${boot.report.replayed} events`);
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
async function buildLog(dir: string): Promise<number> {
  const t0 = now();
  const log = await EventLog.open(dir, { fsync: 'never', logger });
  try {
    await log.append([
      encodeEvent({ type: 'IndexCreated', index: 'r', options: { keys: false, trackExistence: false } }),
      encodeEvent({ type: 'FieldCreated', index: 'r', field: 'f', options: defaultFieldOptions('set') }),
      encodeEvent({ type: 'FieldCreated', index: 'r', field: 'v', options: defaultFieldOptions('int') }),
    ]);
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
  if (VALUES_EVERY > 0 && i % VALUES_EVERY === 0) return { type: 'ValuesSet', index: 'r', field: 'v', shard, columns: cols, values: BigInt64Array.of(BigInt(i % 100_000), 7n, -3n, 1000n) };
  return { type: 'BitsSet', index: 'r', field: 'f', view: 'standard', shard, rows: [i % 100], columns: [new RoaringBitmap32(cols)] };
}
