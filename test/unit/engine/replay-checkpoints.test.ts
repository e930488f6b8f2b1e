// Issue 22, item 5: a long log suffix replayed at start (or in a restore's seal) leaves snapshots
// every `everyEvents` inside the history window, so a later time-travel read there replays at
// most that many events. On a real LevelDB log whose batches carry chosen commit times: the
// checkpoints land where they should (none before the window), each holds exactly the state at
// its sequence, and the replay from the nearest one is short.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultFieldOptions } from '../../../src/domain/types.js';
import { bootstrap } from '../../../src/engine/bootstrap.js';
import type { SnapshotFiles } from '../../../src/engine/ports.js';
import { encodeEvent } from '../../../src/events/codec.js';
import type { Event } from '../../../src/events/types.js';
import { stateDigest } from '../../../src/state/digest.js';
import { EventLog, SnapshotStore } from '../../../src/storage/index.js';
import { removeDir, tempDir } from '../../helpers/temp.js';

const silent = pino({ level: 'silent' });
const T0 = Date.UTC(2026, 0, 1);
const BATCHES = 60;
const EVERY = 1500;
/** The log's read batch (storage/event-log.ts): checkpoints fall on its boundaries. */
const READ_BATCH = 1000;
const PER_BATCH = 100;
const dirs: string[] = [];
/** A replay from nothing: the store lists no snapshot. */
const NO_SNAPSHOTS: SnapshotFiles = {
  write: () => Promise.reject(new Error('not used')),
  list: () => Promise.resolve([]),
  infos: () => Promise.resolve([]),
  read: () => Promise.reject(new Error('not used')),
  prune: () => Promise.resolve([]),
};

afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

/** Schema, then BATCHES batches of PER_BATCH one-bit sets, batch b committed at T0 + b seconds. */
async function buildLog(dir: string): Promise<EventLog> {
  const log = await EventLog.open(dir, { fsync: 'never', logger: silent });
  const schema: Event[] = [
    { type: 'IndexCreated', index: 'i', options: { keys: false, trackExistence: false } },
    { type: 'FieldCreated', index: 'i', field: 'f', options: defaultFieldOptions('set') },
  ];
  await log.append(schema.map(encodeEvent), [], { timeMs: T0 });
  for (let b = 1; b <= BATCHES; b++) {
    const events: Event[] = Array.from({ length: PER_BATCH }, (_, k) => ({
      type: 'BitsSet',
      index: 'i',
      field: 'f',
      view: 'standard',
      shard: 0,
      rows: [b % 7],
      columns: [Uint32Array.of(b * PER_BATCH + k)],
    }));
    await log.append(events.map(encodeEvent), [], { timeMs: T0 + b * 1000 });
  }
  return log;
}

describe('replay checkpoints', () => {
  it('snapshot a long replay every N events inside the window, each at exactly its state', async () => {
    const dir = tempDir('bitledger-checkpoints-');
    dirs.push(dir);
    const log = await buildLog(dir);
    try {
      const snapshots = await SnapshotStore.open(dir, silent);
      // The window starts at batch 10's time: no checkpoint before it.
      const checkpoints = { everyEvents: EVERY, sinceMs: T0 + 10_000, files: snapshots };
      const { holder } = await bootstrap(log, snapshots, silent, Infinity, undefined, undefined, checkpoints);
      const infos = await snapshots.infos();
      const seqs = infos.map((s) => s.seq).sort((a, b) => a - b);
      expect(seqs.length, `checkpoints at ${seqs.join(', ')}`).toBeGreaterThanOrEqual(3);
      for (const s of infos) expect(s.timeMs ?? 0).toBeGreaterThanOrEqual(T0 + 10_000);
      // Never further apart than the cadence plus a read batch and a group commit, each at the
      // end of a group commit (never inside a request).
      for (let i = 1; i < seqs.length; i++)
        expect(seqs[i] - seqs[i - 1], `checkpoints at ${seqs.join(', ')}`).toBeLessThanOrEqual(
          EVERY + READ_BATCH + PER_BATCH,
        );
      for (const seq of seqs) expect((seq - 2) % PER_BATCH, `checkpoints at ${seqs.join(', ')}`).toBe(0);
      expect(log.lastSeq - seqs[seqs.length - 1]).toBeLessThanOrEqual(EVERY + READ_BATCH + PER_BATCH);

      for (const seq of seqs) {
        // The checkpoint's state is the state at its sequence, as a replay from nothing builds it.
        const fromCheckpoint = await bootstrap(log, snapshots, silent, seq);
        expect(fromCheckpoint.report.replayed).toBe(0);
        const fromNothing = await bootstrap(log, NO_SNAPSHOTS, silent, seq);
        expect(stateDigest(fromCheckpoint.holder)).toBe(stateDigest(fromNothing.holder));
      }
      // A point just before a checkpoint replays from the one before: at most the cadence.
      const past = await bootstrap(log, snapshots, silent, seqs[2] - 1);
      expect(past.report.snapshotSeq).toBe(seqs[1]);
      expect(past.report.replayed).toBeLessThanOrEqual(EVERY + READ_BATCH + PER_BATCH);
      // And the whole replay with checkpoints ends at the same state as one without.
      const plain = await bootstrap(log, NO_SNAPSHOTS, silent);
      expect(stateDigest(holder)).toBe(stateDigest(plain.holder));
    } finally {
      await log.close();
    }
  });

  it('write none when every batch is older than the window', async () => {
    const dir = tempDir('bitledger-checkpoints-');
    dirs.push(dir);
    const log = await buildLog(dir);
    try {
      const snapshots = await SnapshotStore.open(dir, silent);
      const checkpoints = { everyEvents: EVERY, sinceMs: T0 + 100_000, files: snapshots };
      await bootstrap(log, snapshots, silent, Infinity, undefined, undefined, checkpoints);
      expect(await snapshots.list()).toEqual([]);
    } finally {
      await log.close();
    }
  });
});
