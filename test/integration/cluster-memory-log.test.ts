// Issue 21, item 9: the holder side of cluster mode without a broker. Three nodes (R=2) and a
// reference node, each a real LevelDB engine with the real CommandApplier, Feed and Positions, read
// an in-memory partitioned log (src/cluster/log/memory-log.ts) fed with a seeded random stream of
// commands: single appends, transactions of chunked commands whose chunks interleave with another
// transaction's in the same partitions (some aborted), ClearRow over every partition, imports.
// The nodes poll in a random order, batches are small (chunk runs cut across batches), nodes seek
// back at random (redelivery), and midway two partitions move: one to a node that installs a
// holder's snapshot (takeover), one to a node that reads it from the start. At the end every node
// holds, for each partition it holds, exactly the reference's bits (which read the stream once,
// in large batches): fails when a redelivered command is applied twice, an aborted one applied,
// a chunk run mis-assembled, or an install is wrong.
import { afterAll, describe, expect, it } from 'vitest';
import type { CommandApplier } from '../../src/cluster/commands/applier.js';
import type { Command, LogCommand } from '../../src/cluster/commands/command.js';
import { commandMessages } from '../../src/cluster/commands/command-codec.js';
import { Feed } from '../../src/cluster/commands/feed.js';
import { capturePartition } from '../../src/cluster/commands/partition-snapshot.js';
import { decodePart } from '../../src/engine/snapshot-part.js';
import { Positions } from '../../src/cluster/commands/positions.js';
import { MemoryConsumer, MemoryLog } from '../../src/cluster/log/memory-log.js';
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';
import type { Engine } from '../../src/engine/engine.js';
import { removeDir } from '../helpers/temp.js';
import {
  newApplier,
  openEngine,
  PARTITIONS,
  partitionOf,
  SET_FIELD,
  type TestEngine,
} from './cluster-write-support.js';
import { seededRandom } from '../helpers/seeded.js';

const META = 'c.meta';
const LOG = 'c.log';
const W = 1 << 20;
const SHARDS = 8;
const T0 = 1_700_000_000_000;

interface Node {
  name: string;
  te: TestEngine & { dir: string };
  applier: CommandApplier;
  logFeed: Feed;
  meta: MemoryConsumer;
  log: MemoryConsumer;
}

const opened: Node[] = [];
afterAll(async () => {
  for (const n of opened) {
    await n.te.close().catch(() => undefined);
    removeDir(n.te.dir);
  }
});

async function node(name: string, mem: MemoryLog, partitions: number[], maxBatch: number): Promise<Node> {
  const te = await openEngine();
  const applier = newApplier(te.engine);
  const positions = new Positions();
  const logFeed = new Feed('log', applier, positions);
  const n: Node = {
    name,
    te,
    applier,
    logFeed,
    meta: new MemoryConsumer(mem, META, new Feed('meta', applier, positions), maxBatch),
    log: new MemoryConsumer(mem, LOG, logFeed, maxBatch),
  };
  n.meta.assign([0], () => 0n);
  n.log.assign(partitions, () => 0n);
  opened.push(n);
  return n;
}

/** Every bit of index i in the given partitions' shards, as text (fragments sorted). */
function bits(engine: Engine, partitions: readonly number[]): string[] {
  return engine.peekApplied((h) => {
    const out: string[] = [];
    for (const field of h.index('i')?.fields.values() ?? [])
      for (const view of field.views.values())
        for (const frag of view.fragments.values()) {
          if (!partitions.includes(partitionOf('i', frag.shard))) continue;
          for (const r of frag.rowIds()) {
            const cols = frag.peekRow(r)?.toArray() ?? [];
            if (cols.length > 0) out.push(`${field.name}/${view.name}/${frag.shard}/${r}: ${cols.join(',')}`);
          }
        }
    return out.sort();
  });
}

/** Drains every consumer of every node (a random order per round) until none has a batch. */
async function drain(nodes: Node[], rnd: () => number): Promise<void> {
  for (let more = true; more; ) {
    more = false;
    for (const n of [...nodes].sort(() => rnd() - 0.5)) {
      if (await n.meta.poll()) more = true;
      if (await n.log.poll()) more = true;
    }
  }
}

describe('cluster holder side on the in-memory log', () => {
  it('three nodes (R=2) hold what one reference node holds, through redelivery and rebalances', {
    timeout: 120_000,
  }, async () => {
    const rnd = seededRandom(2126);
    const mem = new MemoryLog({ [META]: 1, [LOG]: PARTITIONS });
    let time = T0;
    const stamp = <C extends Command>(c: C): C => ({ ...c, time: ++time });
    const metaAt = (): string => String(mem.endOffset(META, 0));
    const meta = (c: Command): void => {
      mem.append(META, 0, commandMessages(stamp(c)));
    };
    meta({ kind: 'schema', schema: { op: 'createIndex', index: 'i', options: { keys: false, trackExistence: true } } });
    meta({
      kind: 'schema',
      schema: { op: 'createField', index: 'i', field: 'f', options: SET_FIELD, extraIntFields: [] },
    });
    const INT = { ...SET_FIELD, type: 'int', min: 0n, max: 100000n } as const;
    meta({ kind: 'schema', schema: { op: 'createField', index: 'i', field: 'n', options: INT, extraIntFields: [] } });

    // Node k holds partitions p with p % 3 === k or (p + 1) % 3 === k (R=2 over 3 nodes).
    const held = (k: number): number[] => [...Array(PARTITIONS).keys()].filter((p) => p % 3 === k || (p + 1) % 3 === k);
    const nodes = [
      await node('n0', mem, held(0), 3),
      await node('n1', mem, held(1), 2),
      await node('n2', mem, held(2), 5),
    ];
    const ref = await node('ref', mem, [...Array(PARTITIONS).keys()], 1000);
    // The schema first, everywhere: a log command waits for the meta offset it names, and these
    // consumers are stepped one after another, not run side by side as a node's are.
    for (const n of [...nodes, ref]) while (await n.meta.poll());

    const pql = (partition: number, text: string): LogCommand =>
      stamp({ kind: 'pql', index: 'i', pql: text, partition, metaOffset: metaAt() });
    const writeOf = (s: number): string => {
      const col = s * W + Math.floor(rnd() * 300);
      const r = rnd();
      if (r < 0.5) return `Set(${col}, f=${1 + Math.floor(rnd() * 3)})`;
      if (r < 0.7) return `Clear(${col}, f=${1 + Math.floor(rnd() * 3)})`;
      return `Set(${col}, n=${Math.floor(rnd() * 1000)})`;
    };
    let aborted = 0;
    let moved = false;
    let installed: bigint | undefined;
    for (let step = 0; step < 240; step++) {
      const r = rnd();
      if (r < 0.4) {
        const s = Math.floor(rnd() * SHARDS);
        mem.append(LOG, partitionOf('i', s), commandMessages(pql(partitionOf('i', s), writeOf(s))));
      } else if (r < 0.8) {
        // Two transactions of chunked commands over two partitions, their chunks interleaved.
        const txs = [mem.begin(), mem.begin()];
        const runs = txs.map(() => {
          const parts = [Math.floor(rnd() * PARTITIONS), Math.floor(rnd() * PARTITIONS)];
          return [...new Set(parts)].flatMap((p) => {
            const shards = [...Array(SHARDS).keys()].filter((s) => partitionOf('i', s) === p);
            const text = Array.from({ length: 3 }, () => writeOf(shards[Math.floor(rnd() * shards.length)])).join('');
            return commandMessages(pql(p, text), 40).map((m) => ({ p, m }));
          });
        });
        for (let i = 0; i < Math.max(runs[0].length, runs[1].length); i++)
          for (const [t, run] of runs.entries()) if (i < run.length) txs[t].send(LOG, run[i].p, [run[i].m]);
        for (const t of txs)
          if (rnd() < 0.15) {
            t.abort();
            aborted++;
          } else t.commit();
      } else if (r < 0.85) {
        const tx = mem.begin();
        for (let p = 0; p < PARTITIONS; p++)
          tx.send(LOG, p, commandMessages(pql(p, `ClearRow(f=${1 + Math.floor(rnd() * 3)})`)));
        tx.commit();
      } else {
        const s = Math.floor(rnd() * SHARDS);
        const columnIds = Array.from({ length: 50 }, () => s * W + Math.floor(rnd() * 5000));
        const body = encodeImportRequest({
          index: 'i',
          field: 'f',
          shard: s,
          rowIds: columnIds.map(() => 2),
          columnIds,
        });
        const cmd = stamp({
          kind: 'import',
          index: 'i',
          field: 'f',
          shard: s,
          format: 'bits',
          clear: false,
          body,
          partition: partitionOf('i', s),
          metaOffset: metaAt(),
        } as const);
        mem.append(LOG, cmd.partition, commandMessages(cmd));
      }
      // Nodes make uneven progress; now and then one is sent an older offset again.
      for (const n of nodes) {
        for (let k = Math.floor(rnd() * 3); k > 0; k--) {
          await n.meta.poll();
          await n.log.poll();
        }
        if (rnd() < 0.06) {
          const ps = n.log.assigned();
          const p = ps[Math.floor(rnd() * ps.length)];
          // Back only (a broker redelivers what was read; it never skips ahead).
          const applied = Number(n.applier.position('log', p) ?? 0n);
          n.log.seek(p, BigInt(Math.floor(rnd() * (applied + 1))));
        }
      }
      if (step === 120) {
        await drain(nodes, rnd);
        // Partition 1 moves from n2 to n0, which installs n1's snapshot of it; partition 3 moves
        // from n1 to n2, which reads it from the log's start.
        const body = nodes[1].te.engine.peekApplied((h) => capturePartition(h, 1, partitionOf));
        expect(body).toBeDefined();
        nodes[0].log.assign([...held(0), 1], (p) => nodes[0].applier.position('log', p) ?? 0n);
        nodes[0].log.pause(1);
        installed = await nodes[0].logFeed.exclusive(1, () =>
          nodes[0].applier.install(1, decodePart(body ?? new Uint8Array())),
        );
        nodes[0].log.seek(1, nodes[0].applier.position('log', 1) ?? 0n);
        nodes[0].log.resume(1);
        nodes[2].log.assign([2, 3], (p) => nodes[2].applier.position('log', p) ?? 0n);
        nodes[1].log.assign([0, 1], (p) => nodes[1].applier.position('log', p) ?? 0n);
        moved = true;
      }
    }
    await drain([...nodes, ref], rnd);
    expect(moved).toBe(true);
    expect(installed, 'the install answers the position it stored').toBeGreaterThan(0n);
    expect(aborted).toBeGreaterThan(0);
    for (const n of nodes) {
      const ps = n.log.assigned();
      for (const p of ps) expect(n.applier.position('log', p), `${n.name} partition ${p}`).toBe(mem.endOffset(LOG, p));
      const want = bits(ref.te.engine, ps);
      expect(want.length).toBeGreaterThan(0);
      expect(bits(n.te.engine, ps), `${n.name} partitions ${ps.join(',')}`).toEqual(want);
    }
  });
});
