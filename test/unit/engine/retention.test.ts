// The history window's retention plan: which snapshots stay and how far the log may be released.
import { describe, expect, it } from 'vitest';
import { RetentionPolicy, type SnapshotTime } from '../../../src/engine/retention.js';

const H = 3_600_000;
const now = 100 * H;
// Snapshots newest first: at seq 900 (1h ago), 700 (5h), 500 (20h), 300 (30h), 100 (40h).
const snaps: SnapshotTime[] = [900, 700, 500, 300, 100].map((seq, i) => ({
  seq,
  timeMs: now - [1, 5, 20, 30, 40][i] * H,
}));
const noBytes = async (): Promise<number> => 0;

describe('RetentionPolicy.plan', () => {
  it('without a window keeps two snapshots and the log after the older', async () => {
    const p = await new RetentionPolicy(2).plan(snaps, now, noBytes);
    expect(p).toEqual({ keptSnapshots: [900, 700], releasableUpTo: 700 });
  });

  it('a 24h window keeps every snapshot inside it plus the newest one before it, and the log after that', async () => {
    const p = await new RetentionPolicy(2, { ms: 24 * H, bytes: 0 }).plan(snaps, now, noBytes);
    expect(p).toEqual({ keptSnapshots: [900, 700, 500, 300], releasableUpTo: 300 });
  });

  it('a window reaching before every snapshot releases nothing', async () => {
    const p = await new RetentionPolicy(2, { ms: 50 * H, bytes: 0 }).plan(snaps, now, noBytes);
    expect(p).toEqual({ keptSnapshots: [900, 700, 500, 300, 100], releasableUpTo: 0 });
  });

  it('a byte cap shrinks the window by whole snapshots, never below the default two', async () => {
    const bytesAfter = async (seq: number): Promise<number> => (1000 - seq) * 10; // 10 bytes per record
    const p = await new RetentionPolicy(2, { ms: 24 * H, bytes: 4000 }).plan(snaps, now, bytesAfter);
    expect(p).toEqual({ keptSnapshots: [900, 700], releasableUpTo: 700 });
    const loose = await new RetentionPolicy(2, { ms: 24 * H, bytes: 6000 }).plan(snaps, now, bytesAfter);
    expect(loose).toEqual({ keptSnapshots: [900, 700, 500], releasableUpTo: 500 });
  });

  it('a hold (a lagging mirror, a running backup) keeps more: the longer need wins', async () => {
    const policy = new RetentionPolicy(2, { ms: 24 * H, bytes: 0 });
    const hold = { name: 'mirror', keepFrom: () => 151 };
    policy.addHold(hold);
    expect((await policy.plan(snaps, now, noBytes)).releasableUpTo).toBe(150);
    policy.removeHold(hold);
    expect((await policy.plan(snaps, now, noBytes)).releasableUpTo).toBe(300);
  });

  it('snapshots with unknown times count as older than the window', async () => {
    const old: SnapshotTime[] = [
      { seq: 900, timeMs: now - H },
      { seq: 700, timeMs: undefined },
      { seq: 500, timeMs: undefined },
    ];
    expect(await new RetentionPolicy(2, { ms: 24 * H, bytes: 0 }).plan(old, now, noBytes)).toEqual({
      keptSnapshots: [900, 700],
      releasableUpTo: 700,
    });
  });
});
