// GET /internal/state: the durability figures an operator wants at a glance (sequences, the
// newest snapshot, the fsync policy), which /status (a Pilosa shape) does not carry.
import type { Engine } from '../engine/engine.js';
import type { Jsonish } from '../encoding/json.js';

export async function durabilityState(engine: Engine): Promise<Jsonish> {
  const applied = engine.appliedSeq;
  const newest = await engine.snapshots.newest();
  const log = engine.logFigures();
  const fsync = log.fsync;
  const mem = process.memoryUsage();
  return {
    state: engine.state,
    readOnly: engine.readOnlyReason ?? null,
    uptimeSeconds: Math.round(process.uptime()),
    sequence: { applied, durable: log.durableSeq, logFirst: log.firstSeq, logLast: log.lastSeq },
    fsync: fsync === undefined ? null : { ...fsync },
    snapshot: {
      newest: newest === undefined ? null : { seq: newest.seq, bytes: newest.bytes, at: newest.at.toISOString() },
      // Records a restart would replay on top of the newest snapshot.
      recordsSince: Math.max(0, applied - (newest?.seq ?? 0)),
      writtenSinceStart: engine.snapshots.stats.count,
      lastMs: engine.snapshots.stats.lastMs,
    },
    memory: { rss: mem.rss, heapUsed: mem.heapUsed },
  };
}
