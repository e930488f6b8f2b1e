import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import roaring from 'roaring';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SnapshotCorruptError, SnapshotStore } from '../../../src/storage/index.js';
import { crc32c } from '../../../src/storage/checksum.js';
import { snapshotFileName } from '../../../src/storage/snapshot-store.js';
import { WARN, bytes, captureLogger, tempDir, text } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
const snapDir = (): string => join(dir, 'snapshots');
const fileOf = (seq: number): string => join(snapDir(), `snap-${String(seq).padStart(16, '0')}.snap`);

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await cleanup();
});

describe('SnapshotStore', () => {
  it('writes, lists newest first, reads and prunes', async () => {
    const store = await SnapshotStore.open(dir, captureLogger().logger);
    expect(await store.list()).toEqual([]);
    const w = await store.write(42, [bytes('hello '), bytes('world')]);
    expect(w.bytes).toBe(32 + 11 + 4);
    async function* chunks(): AsyncIterable<Uint8Array> {
      for (let i = 0; i < 3000; i++) yield bytes(`chunk-${i};`);
      yield new Uint8Array(3 * 1024 * 1024).fill(1); // larger than the staging buffer
      yield bytes('end');
    }
    await store.write(7, chunks());
    await store.write(100, []);
    expect(await store.list()).toEqual([100, 42, 7]);
    expect(text(await store.read(42))).toBe('hello world');
    expect((await store.read(100)).length).toBe(0);
    const seven = await store.read(7);
    const expected = Buffer.concat([
      ...Array.from({ length: 3000 }, (_, i) => bytes(`chunk-${i};`)),
      new Uint8Array(3 * 1024 * 1024).fill(1),
      bytes('end'),
    ]);
    expect(Buffer.from(seven).equals(expected)).toBe(true);

    expect(await store.prune([100, 42])).toEqual([7]);
    expect(await store.list()).toEqual([100, 42]);
  });

  it('ignores .tmp files and deletes them on open', async () => {
    const store = await SnapshotStore.open(dir, captureLogger().logger);
    await store.write(5, [bytes('x')]);
    await writeFile(join(snapDir(), 'snap-0000000000000009.tmp'), 'half a snapshot');
    expect(await store.list()).toEqual([5]);
    const { logger, lines } = captureLogger();
    await SnapshotStore.open(dir, logger);
    expect((await readdir(snapDir())).sort()).toEqual(['snap-0000000000000005.snap']);
    expect(lines.some((l) => l.level === WARN)).toBe(true);
  });

  it('leaves no file behind when the chunk source fails', async () => {
    const store = await SnapshotStore.open(dir, captureLogger().logger);
    async function* failing(): AsyncIterable<Uint8Array> {
      yield bytes('a');
      throw new Error('serializer broke');
    }
    await expect(store.write(3, failing())).rejects.toThrow('serializer broke');
    expect(await readdir(snapDir())).toEqual([]);
  });

  describe('detects corruption', () => {
    async function corrupted(mutate: (f: Buffer) => Buffer, asSeq = 9): Promise<unknown> {
      const store = await SnapshotStore.open(dir, captureLogger().logger);
      await store.write(9, [bytes('some snapshot body')]);
      const file = await readFile(fileOf(9));
      await writeFile(fileOf(asSeq), mutate(file));
      return store.read(asSeq).catch((e: unknown) => e);
    }

    it.each([
      ['a flipped body byte', (f: Buffer) => ((f[38] ^= 1), f), /CRC32C mismatch/],
      ['a flipped CRC byte', (f: Buffer) => ((f[f.length - 1] ^= 1), f), /CRC32C mismatch/],
      ['a truncated file', (f: Buffer) => f.subarray(0, f.length - 3), /body bytes/],
      ['a file shorter than its header', (f: Buffer) => f.subarray(0, 10), /shorter than header/],
      ['a bad magic', (f: Buffer) => ((f[0] = 0x58), f), /bad magic/],
    ])('%s', async (_name, mutate, message) => {
      const err = await corrupted(mutate);
      expect(err).toBeInstanceOf(SnapshotCorruptError);
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message).toContain(fileOf(9));
    });

    it('a file whose header names another sequence', async () => {
      const err = await corrupted((f) => f, 10);
      expect(err).toBeInstanceOf(SnapshotCorruptError);
      expect((err as Error).message).toMatch(/header says sequence 9, file name says 10/);
    });
  });
});

describe('SnapshotStore reads', () => {
  it('gives bodies 32-byte aligned, so frozen rows are used in place without a copy', async () => {
    const store = await SnapshotStore.open(dir, captureLogger().logger);
    // Sizes around glibc's mmap threshold: readFile's buffers there start 16 bytes into a page.
    for (const [seq, size] of [
      [1, 100],
      [2, 70_000],
      [3, 200_000],
      [4, 3_000_000],
    ]) {
      await store.write(seq, [Buffer.alloc(size, seq)]);
      const body = await store.read(seq);
      expect(body.length).toBe(size);
      expect(body[size - 1]).toBe(seq);
      expect(roaring.isBufferAligned(body, 32)).toBe(true);
    }
  });
});

describe('SnapshotStore commit times', () => {
  it('records the commit time in the header, reads old BLSNAP01 files with the time unknown', async () => {
    const store = await SnapshotStore.open(dir, captureLogger().logger);
    await store.write(5, [Buffer.from('body five')], 1_764_000_000_123);
    await store.write(7, [Buffer.from('body seven')]);
    // A format-1 file: 24-byte header without the time field.
    const v1Body = Buffer.from('old body');
    const v1 = Buffer.alloc(24 + v1Body.length + 4);
    v1.write('BLSNAP01', 0, 'latin1');
    v1.writeBigUInt64LE(3n, 8);
    v1.writeBigUInt64LE(BigInt(v1Body.length), 16);
    v1Body.copy(v1, 24);
    v1.writeUInt32LE(crc32c(v1Body), 24 + v1Body.length);
    await writeFile(join(dir, 'snapshots', snapshotFileName(3)), v1);
    const infos = await store.infos();
    expect(infos.map((i) => [i.seq, i.timeMs])).toEqual([
      [7, undefined],
      [5, 1_764_000_000_123],
      [3, undefined],
    ]);
    expect(infos[1].bytes).toBe(32 + 9 + 4);
    expect(Buffer.from(await store.read(3)).toString()).toBe('old body');
    expect((await store.readFile(5)).timeMs).toBe(1_764_000_000_123);
  });
});
