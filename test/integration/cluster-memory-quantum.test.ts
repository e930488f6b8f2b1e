// Issue 21: a frame's time quantum changed (a meta command) while a timestamped write sent before
// it is on its way. Two holders of the write's partition apply it on either side of the change:
// one applies the write first and the change after, the other the change first. Whatever the
// order, both must end with the same bits (the same views), and the write — sent against the old
// quantum, at a meta offset before the change — is kept, in the views of the quantum it was sent
// against, and a time-range read in a write (Store) reads with that quantum too: a holder judges a
// command by its metaOffset, never by its own meta position. Over the in-memory log (no broker),
// with real LevelDB engines and the real applier. Before the fix the change re-created the field:
// the write was erased on one holder and left out on the other (lost, though acknowledged).
import { afterAll, describe, expect, it } from 'vitest';
import type { Command } from '../../src/cluster/commands/command.js';
import { commandMessages } from '../../src/cluster/commands/command-codec.js';
import { Feed } from '../../src/cluster/commands/feed.js';
import { Positions } from '../../src/cluster/commands/positions.js';
import { MemoryConsumer, MemoryLog } from '../../src/cluster/log/memory-log.js';
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';
import type { Engine } from '../../src/engine/engine.js';
import { removeDir } from '../helpers/temp.js';
import { newApplier, openEngine, type TestEngine } from './cluster-write-support.js';

const META = 'c.meta';
const LOG = 'c.log';

interface Holder {
  te: TestEngine & { dir: string };
  meta: MemoryConsumer;
  log: MemoryConsumer;
}

const opened: Holder[] = [];
afterAll(async () => {
  for (const n of opened) {
    await n.te.close().catch(() => undefined);
    removeDir(n.te.dir);
  }
});

async function holder(mem: MemoryLog, dir?: string): Promise<Holder> {
  const te = await openEngine(dir);
  const applier = newApplier(te.engine);
  const positions = new Positions();
  // Batches of one: the test decides how far each holder has read.
  const h = {
    te,
    meta: new MemoryConsumer(mem, META, new Feed('meta', applier, positions), 1),
    log: new MemoryConsumer(mem, LOG, new Feed('log', applier, positions), 1),
  };
  h.meta.assign([0], () => 0n);
  h.log.assign([0], () => 0n);
  opened.push(h);
  return h;
}

/** Every bit of a frame: `view/shard/row: columns`, sorted. */
function bits(engine: Engine, frame = 't'): string[] {
  return engine.peekApplied((h) => {
    const out: string[] = [];
    for (const view of h.index('i')?.field(frame)?.views.values() ?? [])
      for (const frag of view.fragments.values())
        for (const r of frag.rowIds()) {
          const cols = frag.peekRow(r)?.toArray() ?? [];
          if (cols.length > 0) out.push(`${view.name}/${frag.shard}/${r}: ${cols.join(',')}`);
        }
    return out.sort();
  });
}

const quantumOf = (engine: Engine): string | undefined =>
  engine.peekApplied((h) => h.index('i')?.field('t')?.options.timeQuantum);

describe('a time quantum changed between two holders’ applies of a timestamped write', () => {
  it('both holders keep the write in the views of the quantum it was sent against', async () => {
    const mem = new MemoryLog({ [META]: 1, [LOG]: 1 });
    let time = 1_700_000_000_000;
    const send = (topic: string, c: Command): void => {
      mem.append(topic, 0, commandMessages({ ...c, time: ++time }));
    };
    const metaAt = (): string => String(mem.endOffset(META, 0));
    send(META, {
      kind: 'schema',
      schema: { op: 'createIndex', index: 'i', options: { keys: false, trackExistence: true } },
    });
    send(META, {
      kind: 'frame',
      frame: { op: 'createFrame', index: 'i', frame: 't', input: { timeQuantum: 'Y', fields: [] } },
    });
    send(META, { kind: 'frame', frame: { op: 'createFrame', index: 'i', frame: 'g', input: { fields: [] } } });
    const before = metaAt();
    // Sent against quantum Y: a PQL Set with a timestamp and an import with timestamps.
    send(LOG, { kind: 'pql', index: 'i', pql: 'Set(3, t=1, 2019-03-04T05:06)', partition: 0, metaOffset: before });
    const ns = BigInt(Date.UTC(2020, 6, 8, 9)) * 1_000_000n;
    const body = encodeImportRequest({
      index: 'i',
      field: 't',
      shard: 0,
      rowIds: [2, 2],
      columnIds: [5, 6],
      timestamps: [ns, ns],
    });
    send(LOG, {
      kind: 'import',
      index: 'i',
      field: 't',
      shard: 0,
      format: 'bits',
      clear: false,
      body,
      partition: 0,
      metaOffset: before,
    });
    // And a read of t in a write: 2019 is the year view of quantum Y (column 3); with MD it would
    // be read from month views that were never written (nothing).
    const store = 'Store(Row(t=1, from=2019-01-01T00:00, to=2020-01-01T00:00), g=1)';
    send(LOG, { kind: 'pql', index: 'i', pql: store, partition: 0, metaOffset: before });
    send(META, { kind: 'frame', frame: { op: 'setFrameTimeQuantum', index: 'i', frame: 't', quantum: 'MD' } });

    const early = await holder(mem);
    const late = await holder(mem);
    // early: the schema, both writes, then the change. late: the whole schema, then the writes.
    for (let k = 0; k < 3; k++) await early.meta.poll();
    while (await early.log.poll());
    while (await early.meta.poll());
    while (await late.meta.poll());
    while (await late.log.poll());
    for (const h of [early, late]) expect(quantumOf(h.te.engine)).toBe('MD');
    for (const h of [early, late]) expect(bits(h.te.engine, 'g'), 'the Store').toEqual(['standard/0/1: 3']);

    const want = ['standard/0/1: 3', 'standard/0/2: 5,6', 'standard_2019/0/1: 3', 'standard_2020/0/2: 5,6'];
    expect(bits(early.te.engine), 'applied before the change').toEqual(want);
    expect(bits(late.te.engine), 'applied after the change').toEqual(want);

    // A write sent after the change takes the new quantum's views, on both.
    send(LOG, { kind: 'pql', index: 'i', pql: 'Set(9, t=4, 2021-01-02T03:04)', partition: 0, metaOffset: metaAt() });
    for (const h of [early, late]) while (await h.log.poll());
    const after = [...want, 'standard/0/4: 9', 'standard_202101/0/4: 9', 'standard_20210102/0/4: 9'].sort();
    for (const h of [early, late]) expect(bits(h.te.engine)).toEqual(after);

    // Replay after a restart gives the same views.
    await late.te.close();
    const again = await holder(mem, late.te.dir);
    expect(bits(again.te.engine)).toEqual(after);
    expect(quantumOf(again.te.engine)).toBe('MD');
  });

  it('a set frame made a time frame: writes sent before it stay set writes on both holders', async () => {
    const mem = new MemoryLog({ [META]: 1, [LOG]: 1 });
    let time = 1_700_000_000_000;
    const send = (topic: string, c: Command): void => {
      mem.append(topic, 0, commandMessages({ ...c, time: ++time }));
    };
    send(META, {
      kind: 'schema',
      schema: { op: 'createIndex', index: 'i', options: { keys: false, trackExistence: false } },
    });
    send(META, { kind: 'frame', frame: { op: 'createFrame', index: 'i', frame: 's', input: { fields: [] } } });
    const before = String(mem.endOffset(META, 0));
    // A Set with a timestamp on a set frame writes the standard view only; an import with
    // timestamps is refused ("no time quantum"): on both holders alike, whatever their timing.
    send(LOG, { kind: 'pql', index: 'i', pql: 'Set(3, s=1, 2019-03-04T05:06)', partition: 0, metaOffset: before });
    const ns = BigInt(Date.UTC(2020, 6, 8, 9)) * 1_000_000n;
    const body = encodeImportRequest({
      index: 'i',
      field: 's',
      shard: 0,
      rowIds: [2],
      columnIds: [5],
      timestamps: [ns],
    });
    send(LOG, {
      kind: 'import',
      index: 'i',
      field: 's',
      shard: 0,
      format: 'bits',
      clear: false,
      body,
      partition: 0,
      metaOffset: before,
    });
    send(META, { kind: 'frame', frame: { op: 'setFrameTimeQuantum', index: 'i', frame: 's', quantum: 'YM' } });

    const early = await holder(mem);
    const late = await holder(mem);
    await early.meta.poll();
    await early.meta.poll();
    while (await early.log.poll());
    while (await early.meta.poll());
    while (await late.meta.poll());
    while (await late.log.poll());
    for (const h of [early, late]) {
      expect(h.te.engine.peekApplied((x) => x.index('i')?.field('s')?.options.type)).toBe('time');
      expect(bits(h.te.engine, 's')).toEqual(['standard/0/1: 3']);
    }
  });
});
