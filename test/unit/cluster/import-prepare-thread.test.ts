// A large bits import's events built on the prepare thread (cluster/commands/import-prepare-thread.ts) are
// the events the request thread builds (prepareBits): the same records, byte for byte, committed
// the same way; refusals, the one-step imports and a field changed since come back as "decide
// afresh" (undefined), never as wrong events. A real worker thread over a real in-memory engine.
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultFieldOptions, type FieldOptions } from '../../../src/domain/types.js';
import { bootstrap } from '../../../src/engine/bootstrap.js';
import type { Engine } from '../../../src/engine/engine.js';
import { encodeImportRequest } from '../../../src/encoding/import-request-encode.js';
import { decodeImportRequest } from '../../../src/encoding/import-request.js';
import { prepareBits } from '../../../src/service/import/prepare-bits.js';
import { PrepareThread } from '../../../src/cluster/commands/import-prepare-thread.js';
import { EventLog } from '../../../src/storage/event-log.js';
import { MemoryDisk } from '../../../src/storage/memory/memory-disk.js';
import { MemoryKv } from '../../../src/storage/memory/memory-kv.js';
import { MemorySnapshots } from '../../../src/storage/memory/memory-snapshots.js';
import { systemClock } from '../../../src/util/clock.js';
import { testEngine } from '../../helpers/test-engine.js';

const silent = pino({ level: 'silent' });
const SHARD_WIDTH = 1 << 20;
const thread = new PrepareThread(0);
afterAll(() => thread.close());

async function engineWith(fields: Record<string, FieldOptions>, trackExistence = true): Promise<Engine> {
  const disk = new MemoryDisk(systemClock);
  const log = await EventLog.openOn(new MemoryKv(disk), { fsync: 'always', logger: silent });
  const snapshots = new MemorySnapshots(disk);
  const { holder } = await bootstrap(log, snapshots, silent);
  const engine = testEngine(holder, log, snapshots, silent);
  await engine.commit({
    decide: (_h, sink) => {
      sink.emit({ type: 'IndexCreated', index: 'i', options: { keys: false, trackExistence } });
      for (const [field, options] of Object.entries(fields))
        sink.emit({ type: 'FieldCreated', index: 'i', field, options });
    },
  });
  return engine;
}

/** Rows 1..3 over a spread of shard 2's columns, some repeated. */
function body(field: string, shard = 2, extra: { columnIds?: number[]; timestamps?: bigint[] } = {}): Uint8Array {
  const rowIds: number[] = [];
  const columnIds: number[] = [];
  for (let k = 0; k < 30_000; k++) {
    rowIds.push(1 + (k % 3));
    columnIds.push(shard * SHARD_WIDTH + ((k * 7919) % SHARD_WIDTH));
  }
  return encodeImportRequest({
    index: 'i',
    field,
    shard,
    rowIds: [...rowIds, ...(extra.columnIds ?? []).map(() => 1)],
    columnIds: [...columnIds, ...(extra.columnIds ?? [])],
    ...(extra.timestamps !== undefined ? { timestamps: extra.timestamps } : {}),
  });
}

const where = (field: string, shard = 2) => ({ index: 'i', field, shard, clear: false });

describe('the import prepare thread', () => {
  it('builds the records the request thread builds, and they commit to the same rows', async () => {
    const engine = await engineWith({ f: defaultFieldOptions('set') });
    const b = body('f');
    const off = await thread.prepare(engine, where('f'), b);
    const here = await prepareBits(engine, { ...decodeImportRequest(b), ...where('f') });
    const events = engine.peekApplied((h) => off?.commit(h));
    const expected = engine.peekApplied((h) => here?.commit(h));
    expect(events).toBeDefined();
    expect(events?.map((e) => [e.record.type, Buffer.from(e.record.payload).toString('hex')])).toEqual(
      expected?.map((e) => [e.record.type, Buffer.from(e.record.payload).toString('hex')]),
    );
    expect(events?.map((e) => e.event.type)).toEqual(['BitsSet']);
    await engine.commit({ prepared: (h) => off?.commit(h) });
    const counts = engine.peekApplied((h) => {
      const frag = h.index('i')?.field('f')?.view('standard')?.fragment(2);
      return [1, 2, 3].map((r) => frag?.row(r)?.size);
    });
    expect(counts).toEqual([10_000, 10_000, 10_000]);
    const exists = engine.peekApplied((h) => h.index('i')?.existence?.view('standard')?.fragment(2)?.row(0)?.size);
    expect(exists).toBe(30_000);
    await engine.stop();
  });

  it('a time field: one event per view, as on the request thread', async () => {
    const engine = await engineWith({ t: { ...defaultFieldOptions('time'), timeQuantum: 'YM' } });
    const ts = Array.from({ length: 30_000 }, (_, k) => BigInt(Date.UTC(2020, k % 2, 3)) * 1_000_000n);
    const b = body('t', 2, { timestamps: ts });
    const off = await thread.prepare(engine, where('t'), b);
    const here = await prepareBits(engine, { ...decodeImportRequest(b), ...where('t') });
    const views = (p: typeof off) =>
      engine.peekApplied((h) => p?.commit(h))?.map((e) => (e.event.type === 'BitsSet' ? e.event.view : e.event.type));
    expect(views(off)).toEqual(views(here));
    expect(views(off)).toContain('standard_202002');
    await engine.stop();
  });

  it('a column outside the named shard, a missing field, a mutex field: nothing built there', async () => {
    const engine = await engineWith({ f: defaultFieldOptions('set'), m: defaultFieldOptions('mutex') });
    expect(await thread.prepare(engine, where('f'), body('f', 2, { columnIds: [5 * SHARD_WIDTH] }))).toBeUndefined();
    expect(await thread.prepare(engine, where('m'), body('m'))).toBeUndefined();
    await expect(thread.prepare(engine, where('nope'), body('nope'))).rejects.toThrow(/field not found/);
    await engine.stop();
  });

  it('events built for a field that changed since are not committed', async () => {
    const engine = await engineWith({ f: defaultFieldOptions('set') });
    const off = await thread.prepare(engine, where('f'), body('f'));
    await engine.commit({
      decide: (_h, sink) => {
        sink.emit({ type: 'FieldDeleted', index: 'i', field: 'f' });
        sink.emit({ type: 'FieldCreated', index: 'i', field: 'f', options: defaultFieldOptions('set') });
      },
    });
    expect(engine.peekApplied((h) => off?.commit(h))).toBeUndefined();
    await engine.stop();
  });
});
