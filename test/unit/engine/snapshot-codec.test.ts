// Snapshot bodies: the fragment record (rows as frozen views, adopted by apply) must rebuild
// exactly the state it was taken from, and a body of the previous format (every fragment a
// BitsSet event) must still load to the same state.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultFieldOptions } from '../../../src/domain/types.js';
import {
  FRAGMENT_RECORD,
  SnapshotStreamDecoder,
  captureSnapshot,
  decodeSnapshot,
  encodeSnapshot,
} from '../../../src/engine/snapshot-codec.js';
import { deferredFragments, warmUp } from '../../../src/engine/warm-up.js';
import { encodeEvent } from '../../../src/events/codec.js';
import type { Event } from '../../../src/events/types.js';
import { apply } from '../../../src/events/apply.js';
import { stateDigest } from '../../../src/state/digest.js';
import { RoaringBitmap32 } from '../../../src/roaring/bitmap.js';
import { Holder } from '../../../src/state/holder.js';
import { fragmentEvent, stateEvents } from '../../../src/events/state-events.js';
import { captureLogger } from '../storage/helpers.js';

const range = (from: number, to: number, step = 1): number[] =>
  Array.from({ length: Math.ceil((to - from) / step) }, (_, k) => from + k * step);

/** Sparse, dense and run rows, an int field, existence: also what the fixture file was written from. */
const fixtureEvents = (): Event[] => [
  { type: 'IndexCreated', index: 'i', options: { keys: false, trackExistence: true } },
  { type: 'FieldCreated', index: 'i', field: 'f', options: defaultFieldOptions('set') },
  { type: 'FieldCreated', index: 'i', field: 'n', options: { ...defaultFieldOptions('int'), min: -1000n, max: 1000n } },
  {
    type: 'BitsSet',
    index: 'i',
    field: 'f',
    view: 'standard',
    shard: 0,
    rows: [1, 7, 2 ** 40],
    columns: [
      new RoaringBitmap32(range(0, 5000, 7)),
      new RoaringBitmap32(range(0, 200_000)),
      new RoaringBitmap32([1, 1_048_575]),
    ],
    exists: true,
  },
  {
    type: 'BitsSet',
    index: 'i',
    field: 'f',
    view: 'standard',
    shard: 3,
    rows: [1],
    columns: [Uint32Array.of(3, 9, 12)],
  },
  {
    type: 'ValuesSet',
    index: 'i',
    field: 'n',
    shard: 0,
    columns: Uint32Array.of(1, 2, 3),
    values: BigInt64Array.of(-5n, 0n, 999n),
  },
];

const holderOf = (events: Event[]): Holder => {
  const h = new Holder();
  for (const e of events) apply(h, e);
  return h;
};

/** The fixture's state plus keys, attrs and a second index. */
const sampleHolder = (): Holder =>
  holderOf([
    ...fixtureEvents(),
    { type: 'IndexCreated', index: 'k', options: { keys: true, trackExistence: false } },
    { type: 'FieldCreated', index: 'k', field: 'g', options: defaultFieldOptions('set') },
    { type: 'KeysAssigned', index: 'k', field: '', firstId: 1, keys: ['a', 'b', 'c'] },
    { type: 'BitsSet', index: 'k', field: 'g', view: 'standard', shard: 0, rows: [4], columns: [Uint32Array.of(1, 2)] },
    { type: 'RowAttrsSet', index: 'i', field: 'f', row: 7, attrs: { color: 'red' } },
  ]);

const load = (body: Uint8Array): Holder => {
  const h = new Holder();
  for (const e of decodeSnapshot(body)) apply(h, e);
  return h;
};

/** The format before FRAGMENT_RECORD: every state event through the log codec, framed. */
function previousFormat(holder: Holder): Buffer {
  const parts: Uint8Array[] = [];
  for (const item of stateEvents(holder)) {
    const { type, payload } = encodeEvent(item.type === 'Fragment' ? fragmentEvent(item) : item);
    const head = Buffer.alloc(5);
    head[0] = type;
    head.writeUInt32LE(payload.byteLength, 1);
    parts.push(head, payload);
  }
  return Buffer.concat(parts);
}

describe('snapshot codec', () => {
  it('writes fragments as fragment records and loads them to the same state', () => {
    const live = sampleHolder();
    const body = Buffer.concat(encodeSnapshot(live).chunks);
    const types: number[] = [];
    for (let p = 0; p < body.length; p += 5 + body.readUInt32LE(p + 1)) types.push(body[p]);
    // i/f shard 0 and 3, i/_exists shard 0, i/n's BSI view, k/g.
    expect(types.filter((t) => t === FRAGMENT_RECORD)).toHaveLength(5);
    const restored = load(body);
    expect(stateDigest(restored)).toBe(stateDigest(live));
    expect(
      restored
        .index('i')
        ?.field('f')
        ?.view('standard')
        ?.fragment(0)
        ?.row(2 ** 40)
        ?.toArray(),
    ).toEqual([1, 1_048_575]);
  });

  it('loads a snapshot of the previous format (fragments as BitsSet events)', () => {
    const live = sampleHolder();
    const old = previousFormat(live);
    const types: number[] = [];
    for (let p = 0; p < old.length; p += 5 + old.readUInt32LE(p + 1)) types.push(old[p]);
    expect(types).not.toContain(FRAGMENT_RECORD);
    expect(stateDigest(load(old))).toBe(stateDigest(live));
  });

  it('loads a snapshot body written by the build before fragment records', () => {
    // Written by the previous build's encodeSnapshot from fixtureEvents().
    const old = readFileSync(
      join(dirname(fileURLToPath(import.meta.url)), '../../fixtures/snapshot-body-bitsset-events.bin'),
    );
    const types: number[] = [];
    for (let p = 0; p < old.length; p += 5 + old.readUInt32LE(p + 1)) types.push(old[p]);
    expect(types).not.toContain(FRAGMENT_RECORD);
    expect(stateDigest(load(old))).toBe(stateDigest(holderOf(fixtureEvents())));
  });

  it('loads rows as frozen views that later writes copy, from an unaligned buffer too', () => {
    const live = sampleHolder();
    const body = Buffer.concat(encodeSnapshot(live).chunks);
    const shifted = Buffer.alloc(body.length + 1).subarray(1); // never 32-byte aligned
    body.copy(shifted);
    const restored = load(shifted);
    const row = (h: Holder, r: number) => h.index('i')?.field('f')?.view('standard')?.fragment(0)?.row(r);
    expect(row(restored, 7)?.isFrozen).toBe(true);
    const writes: Event[] = [
      {
        type: 'BitsSet',
        index: 'i',
        field: 'f',
        view: 'standard',
        shard: 0,
        rows: [7],
        columns: [Uint32Array.of(300_000, 300_001)],
      },
      {
        type: 'BitsCleared',
        index: 'i',
        field: 'f',
        view: 'standard',
        shard: 0,
        rows: [1],
        columns: [new RoaringBitmap32([0, 7, 14])],
      },
      {
        type: 'BitsSet',
        index: 'i',
        field: 'f',
        view: 'standard',
        shard: 0,
        rows: [2 ** 40],
        columns: [new RoaringBitmap32([5, 6])],
        adopt: true,
      },
      { type: 'RowCleared', index: 'i', field: 'f', row: 1 },
      {
        type: 'ValuesSet',
        index: 'i',
        field: 'n',
        shard: 0,
        columns: Uint32Array.of(2, 4),
        values: BigInt64Array.of(-7n, 12n),
      },
    ];
    for (const e of writes) {
      apply(live, e);
      apply(restored, e);
      expect(stateDigest(restored)).toBe(stateDigest(live));
    }
    expect(row(restored, 7)?.isFrozen).toBe(false);
    expect(row(restored, 7)?.has(300_001)).toBe(true);
  });

  it('a lazy load (restarts) defers every fragment until it is first touched', () => {
    const live = sampleHolder();
    const body = Buffer.concat(encodeSnapshot(live).chunks);
    const restored = new Holder();
    for (const e of decodeSnapshot(body, { lazy: true })) apply(restored, e);
    expect(deferredFragments(restored)).toHaveLength(5);
    // A write into a deferred fragment decodes it first: the row keeps the bits it had.
    const set: Event = {
      type: 'BitsSet',
      index: 'i',
      field: 'f',
      view: 'standard',
      shard: 0,
      rows: [7],
      columns: [Uint32Array.of(300_000)],
    };
    apply(live, set);
    apply(restored, set);
    expect(deferredFragments(restored)).toHaveLength(4);
    expect(restored.index('i')?.field('f')?.view('standard')?.fragment(0)?.row(7)?.size).toBe(200_001);
    expect(stateDigest(restored)).toBe(stateDigest(live));
    expect(deferredFragments(restored)).toHaveLength(0);
  });

  it('a lazy load keeps rows as bytes; a snapshot of them copies the bytes and loads the same', () => {
    const live = sampleHolder();
    const restored = new Holder();
    for (const e of decodeSnapshot(Buffer.concat(encodeSnapshot(live).chunks), { lazy: true })) apply(restored, e);
    const frag = restored.index('i')!.field('f')!.view('standard')!.fragment(0)!;
    const rows = frag.rowIds().length;
    expect(rows).toBeGreaterThan(0);
    expect(frag.packedCount).toBe(rows); // adopted, none viewed
    // Snapshot of the packed state (bytes copied as they are), loaded eagerly and lazily.
    const again = Buffer.concat(encodeSnapshot(restored).chunks);
    expect(frag.packedCount).toBe(rows);
    expect(stateDigest(load(again))).toBe(stateDigest(live));
    const lazy = new Holder();
    for (const e of decodeSnapshot(again, { lazy: true })) apply(lazy, e);
    expect(stateDigest(lazy)).toBe(stateDigest(live));
    expect(stateDigest(restored)).toBe(stateDigest(live));
    expect(frag.packedCount).toBe(rows); // a digest reads rows without keeping views
  });

  it('warm-up decodes the deferred fragments, and stops when told', async () => {
    const body = Buffer.concat(encodeSnapshot(sampleHolder()).chunks);
    const restored = new Holder();
    for (const e of decodeSnapshot(body, { lazy: true })) apply(restored, e);
    const { logger } = captureLogger();
    expect(await warmUp(deferredFragments(restored), () => true, logger)).toBe(0);
    expect(deferredFragments(restored)).toHaveLength(5);
    expect(await warmUp(deferredFragments(restored), () => false, logger)).toBe(5);
    expect(deferredFragments(restored)).toHaveLength(0);
    expect(stateDigest(restored)).toBe(stateDigest(sampleHolder()));
  });

  it('a captured snapshot is the state when captured, though writes land before it is encoded', () => {
    // Frozen rows (loaded) and mutable ones (written since), then writes to both after capture.
    const h = load(Buffer.concat(encodeSnapshot(sampleHolder()).chunks));
    apply(h, {
      type: 'BitsSet',
      index: 'i',
      field: 'f',
      view: 'standard',
      shard: 0,
      rows: [8],
      columns: [Uint32Array.of(1, 2, 3)],
    });
    const before = stateDigest(h);
    const captured = captureSnapshot(h);
    for (const row of [7, 8, 2 ** 40])
      apply(h, {
        type: 'BitsSet',
        index: 'i',
        field: 'f',
        view: 'standard',
        shard: 0,
        rows: [row],
        columns: [Uint32Array.of(999_999)],
      });
    apply(h, { type: 'RowCleared', index: 'i', field: 'f', row: 1 });
    expect(stateDigest(h)).not.toBe(before);
    expect(stateDigest(load(Buffer.concat([...captured.chunks])))).toBe(before);
  });

  it('refuses a truncated fragment record', () => {
    const body = Buffer.concat(encodeSnapshot(sampleHolder()).chunks);
    let p = 0;
    while (body[p] !== FRAGMENT_RECORD) p += 5 + body.readUInt32LE(p + 1);
    const len = body.readUInt32LE(p + 1);
    const cut = Buffer.from(body.subarray(0, p + 5 + len));
    cut.writeUInt32LE(len - 3, p + 1);
    expect(() => [...decodeSnapshot(Buffer.from(cut.subarray(0, p + 5 + len - 3)))]).toThrow(
      /fragment record|truncated/,
    );
  });

  it('decodes a body streamed in pieces of any size to the same state, the rows aligned', () => {
    const live = sampleHolder();
    const body = Buffer.concat(encodeSnapshot(live).chunks);
    for (const size of [1, 5, 7, 31, 33, 4096, body.length]) {
      const decoder = new SnapshotStreamDecoder();
      const restored = new Holder();
      // Each piece a copy of its own (a socket's): no view into the encoded body survives.
      for (let p = 0; p < body.length; p += size)
        for (const e of decoder.push(Buffer.from(body.subarray(p, p + size)))) apply(restored, e);
      decoder.end();
      expect({ size, digest: stateDigest(restored) }).toEqual({ size, digest: stateDigest(live) });
      const row = restored.index('i')?.field('f')?.view('standard')?.fragment(0)?.row(7);
      expect(row?.isFrozen).toBe(true);
      expect(row?.size).toBe(200_000);
    }
  });

  it('a streamed body that ends inside a record is refused', () => {
    const body = Buffer.concat(encodeSnapshot(sampleHolder()).chunks);
    for (const cut of [3, body.length - 1]) {
      const decoder = new SnapshotStreamDecoder();
      decoder.push(body.subarray(0, cut));
      expect(() => decoder.end()).toThrow(/truncated/);
    }
  });
});
