// The faults a seed injects into the in-memory disk: failed writes (ENOSPC, EIO), slow syncs,
// what a crash keeps of the unsynced writes, and damage to a durable record or snapshot file.
import { LOG_PREFIX, logKeySeq } from '../src/storage/keys.js';
import { type CrashChoice, MemoryDisk, type StorageFaults } from '../src/storage/memory/memory-disk.js';
import type { Clock } from '../src/util/clock.js';
import type { Rng } from './rng.js';

const isLogKey = (key: string): boolean => key.length === 9 && key.charCodeAt(0) === LOG_PREFIX;

/** A disk whose fault rates the seed picks (some seeds run without failed writes). */
export function newDisk(rng: Rng, clock: Clock, breakAckedLoss: boolean): MemoryDisk {
  const failRate = rng.pick([0, 0, 0.002, 0.01]);
  const slowRate = rng.pick([0, 0.02, 0.1]);
  const faults: StorageFaults = {
    failure: () => (rng.chance(failRate) ? (rng.chance(0.5) ? 'ENOSPC' : 'EIO') : undefined),
    latency: (call) => {
      if (!call.sync) return rng.int(2);
      return rng.chance(slowRate) ? rng.between(20, 120) : rng.between(1, 4);
    },
  };
  return new MemoryDisk(clock, faults, isLogKey, breakAckedLoss);
}

/** How a crash treats unsynced writes; a clean stop keeps them all (the OS had them). */
export function pickCrash(rng: Rng, disk: MemoryDisk, clean: boolean): CrashChoice {
  const loseLastSynced = disk.breakAckedLoss && !clean;
  if (clean) return { keepUnsynced: disk.unsynced };
  const keepUnsynced = rng.int(disk.unsynced + 1);
  return { keepUnsynced, tear: rng.chance(0.5) ? rng.next() : undefined, loseLastSynced };
}

/** Damages one durable log record (never the last: a damaged tail is a torn write) or snapshot file. */
export function damageOne(rng: Rng, disk: MemoryDisk): { what: string; undo(): void } | undefined {
  if (rng.chance(0.5) && disk.snapshotFiles.size > 0) {
    const seqs = [...disk.snapshotFiles.keys()].sort((a, b) => a - b);
    const seq = seqs[rng.int(seqs.length)];
    const before = disk.snapshotFiles.get(seq)!;
    const after = Buffer.from(before);
    after[32 + rng.int(Math.max(1, after.length - 36))] ^= 0x5a;
    disk.snapshotFiles.set(seq, after);
    return {
      what: `snapshot ${seq}`,
      undo: () => {
        if (disk.snapshotFiles.get(seq) === after) disk.snapshotFiles.set(seq, before);
      },
    };
  }
  const logKeys = [...disk.durableEntries().keys()].filter(isLogKey).sort();
  const last = logKeys[logKeys.length - 1];
  const d = disk.damage(
    (k) => isLogKey(k) && k !== last,
    (n) => rng.int(n),
  );
  return d === undefined ? undefined : { what: `log record ${logKeySeq(Buffer.from(d.key, 'latin1'))}`, undo: d.undo };
}
