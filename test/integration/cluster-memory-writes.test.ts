// Issue 21, item 9: the write coordinators without a broker. One node (a real LevelDB engine, the
// real CommandApplier, Feed and Positions) whose ClusterWrites sends through the log port's
// producer (src/cluster/log/log-producer.ts) into the in-memory log, which its consumers read back:
// a meta command's result is this node's apply; a write over several partitions is one transaction
// and each command's result is its holder's; a refused command answers the holder's error, and a
// transaction of chunked commands arrives whole.
import { afterAll, describe, expect, it } from 'vitest';
import { Feed } from '../../src/cluster/commands/feed.js';
import { Positions } from '../../src/cluster/commands/positions.js';
import { ClusterWrites } from '../../src/cluster/coordination/cluster-writes.js';
import { LogProducer } from '../../src/cluster/log/log-producer.js';
import { MemoryConsumer, MemoryLog } from '../../src/cluster/log/memory-log.js';
import { DomainError } from '../../src/domain/errors.js';
import { removeDir } from '../helpers/temp.js';
import { newApplier, openEngine, PARTITIONS, partitionOf, SET_FIELD, soleView } from './cluster-write-support.js';

const W = 1 << 20;
const te = await openEngine();
afterAll(async () => {
  await te.close();
  removeDir(te.dir);
});

describe('cluster writes through the log port (in-memory log, no broker)', () => {
  it('meta and log commands are sent, read back, applied and answered', async () => {
    const mem = new MemoryLog({ 'c.meta': 1, 'c.log': PARTITIONS });
    const applier = newApplier(te.engine);
    const positions = new Positions();
    const meta = new MemoryConsumer(mem, 'c.meta', new Feed('meta', applier, positions), 2);
    const log = new MemoryConsumer(mem, 'c.log', new Feed('log', applier, positions), 2);
    meta.assign([0], () => 0n);
    log.assign(
      Array.from({ length: PARTITIONS }, (_, p) => p),
      () => 0n,
    );
    // The node's consumers, running until the test ends (the coordinator waits on what they apply).
    let running = true;
    const pump = (async () => {
      while (running) {
        await meta.poll();
        await log.poll();
        await new Promise((r) => setImmediate(r));
      }
    })();
    try {
      const writes = new ClusterWrites({
        view: soleView('c', applier),
        producer: new LogProducer(mem, 64),
        applier,
      });
      await writes.meta({
        kind: 'schema',
        schema: { op: 'createIndex', index: 'i', options: { keys: false, trackExistence: false } },
      });
      await writes.meta({
        kind: 'schema',
        schema: { op: 'createField', index: 'i', field: 'f', options: SET_FIELD, extraIntFields: [] },
      });
      const at = writes.metaOffset();
      const shards = [0, 1, 2, 3, 5];
      const commands = shards.map((s) => ({
        kind: 'pql' as const,
        index: 'i',
        pql: `Set(${s * W + 7}, f=1) Set(${s * W + 8}, f=1)`,
        partition: partitionOf('i', s),
        metaOffset: at,
      }));
      const changed = { type: 'changed', changed: true };
      expect(await writes.logResults(commands)).toEqual(shards.map(() => [changed, changed]));
      await expect(
        writes.logResults([{ kind: 'pql', index: 'i', pql: 'Set(1, nope=1)', partition: 0, metaOffset: at }]),
      ).rejects.toBeInstanceOf(DomainError);
      const cols = te.engine.peekApplied((h) => {
        const field = h.index('i')?.field('f');
        const out: number[] = [];
        for (const view of field?.views.values() ?? [])
          for (const frag of view.fragments.values())
            for (const c of frag.peekRow(1)?.toUint32Array() ?? []) out.push(frag.shard * W + c);
        return out.sort((a, b) => a - b);
      });
      expect(cols).toEqual(shards.flatMap((s) => [s * W + 7, s * W + 8]));
    } finally {
      running = false;
      await pump;
    }
  });
});
