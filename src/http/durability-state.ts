// GET /internal/state: the durability figures an operator wants at a glance (sequences, the
// newest snapshot, the fsync policy), which /status (a Pilosa shape) does not carry.
import type { Engine } from '../engine/engine.js';
import type { Jsonish } from '../encoding/json.js';

export async function durabilityState(engine: Engine): Promise<Jsonish> {
  const applied = engine.holder.appliedSeq;
  const newest = (await engine.snapshots.newest?.()) ?? undefined;
  const fsync = engine.log.fsyncPolicy;
  const mem = process.memoryUsage();
  return {
    state: engine.state,
    readOnly: engine.options.readOnlyReason ?? null,
    uptimeSeconds: Math.round(process.uptime()),
    sequence: { applied, durable: engine.queue.durableSeq, logFirst: engine.log.firstSeq, logLast: engine.log.lastSeq },
    fsync: fsync === undefined ? null : { ...fsync },
    snapshot: {
      newest: newest === undefined ? null : { seq: newest.seq, bytes: newest.bytes, at: newest.at.toISOString() },
      // Records a restart would replay on top of the newest snapshot.
      recordsSince: Math.max(0, applied - (newest?.seq ?? 0)),
      writtenSinceStart: engine.snapshotStats.count,
      lastMs: engine.snapshotStats.lastMs,
    },
    memory: { rss: mem.rss, heapUsed: mem.heapUsed },
  };
}
