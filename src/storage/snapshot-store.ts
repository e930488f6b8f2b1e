// Snapshot files in <dataDir>/snapshots/, published atomically: written to snap-<seq>.tmp,
// fsynced, renamed to snap-<seq>.snap, directory fsynced. A .snap file is therefore complete or
// absent; a leftover .tmp is a write that never finished and is deleted at open.
//   'BLSNAP02' | seq u64 LE | body length u64 LE | commit time ms i64 LE (-1: unknown) | body | CRC32C(body) u32 LE
// 'BLSNAP01' files (no time field, 24-byte header) are still read; their time is unknown.
// The CRC is a trailer so the body can be streamed without knowing it in advance; the length
// is patched in place before the fsync.
// A file is read into a 32-byte aligned buffer, so a BLSNAP02 body (at offset 32) is aligned as
// the frozen rows in it need (engine/snapshot-codec.ts) and is used in place; a BLSNAP01 body (at
// offset 24) is not, and costs the decoder one copy.
import { mkdir, open, readdir, stat, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import roaring from 'roaring';
import { assert } from '../util/assert.js';
import { crc32c } from './checksum.js';
import { SNAPSHOTS_SUBDIR } from './data-dir.js';
import { fsyncDir, writeAll, writeFileAtomic } from './durable-fs.js';
import { SnapshotCorruptError } from './errors.js';

const MAGIC_V1 = Buffer.from('BLSNAP01', 'latin1');
const MAGIC = Buffer.from('BLSNAP02', 'latin1');
const HEADER_V1_BYTES = 24;
const HEADER_BYTES = 32;
const TIME_OFFSET = 24;
const TRAILER_BYTES = 4;
const LENGTH_OFFSET = 16;
const FILE_RE = /^snap-(\d{16})\.snap$/;
// Snapshot bodies arrive as many small chunks (one per row or fragment); coalesce them so the
// file sees large writes and the checksum sees few native calls.
const STAGING_BYTES = 1024 * 1024;

export const snapshotFileName = (seq: number, ext: 'snap' | 'tmp' = 'snap'): string =>
  `snap-${String(seq).padStart(16, '0')}.${ext}`;
const fileName = snapshotFileName;

/** What list() names plus the header's commit time and the file's size, without reading the body. */
export interface SnapshotInfo {
  readonly seq: number;
  /** Commit time of record `seq` (ms); undefined when unknown (old file, or a log without times). */
  readonly timeMs: number | undefined;
  readonly bytes: number;
}

function snapshotSeqs(names: string[]): number[] {
  const seqs: number[] = [];
  for (const name of names) {
    const m = FILE_RE.exec(name);
    if (m !== null) seqs.push(Number(m[1]));
  }
  return seqs.sort((a, b) => b - a);
}

export class SnapshotStore {
  private constructor(
    readonly dir: string,
    private readonly logger: Logger,
  ) {}

  /** Call after the data directory is locked (openLevelDb): stale .tmp files are deleted here. */
  static async open(dataDir: string, logger: Logger): Promise<SnapshotStore> {
    const dir = join(dataDir, SNAPSHOTS_SUBDIR);
    await mkdir(dir, { recursive: true });
    for (const name of await readdir(dir)) {
      if (!name.endsWith('.tmp')) continue;
      await unlink(join(dir, name));
      logger.warn({ file: name }, 'snapshot store: deleted an unfinished snapshot write');
    }
    return new SnapshotStore(dir, logger);
  }

  /** Sequences of the published snapshots in `dataDir`, newest first, touching nothing. */
  static async listIn(dataDir: string): Promise<number[]> {
    const names = await readdir(join(dataDir, SNAPSHOTS_SUBDIR)).catch(() => [] as string[]);
    return snapshotSeqs(names);
  }

  /** Streams a snapshot of the state at `seq`; it is visible to list() only once complete. */
  async write(
    seq: number,
    chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
    timeMs?: number,
  ): Promise<{ bytes: number }> {
    assert(Number.isSafeInteger(seq) && seq >= 0, `snapshot seq ${seq} is not a sequence`);
    const tmp = join(this.dir, fileName(seq, 'tmp'));
    const body = await writeFileAtomic(
      this.dir,
      join(this.dir, fileName(seq, 'snap')),
      (fh) => writeBody(fh, seq, chunks, timeMs),
      tmp,
    );
    this.logger.info({ seq, bytes: body }, 'snapshot written');
    return { bytes: HEADER_BYTES + body + TRAILER_BYTES };
  }

  /** Sequences of the published snapshots, newest first. */
  async list(): Promise<number[]> {
    return snapshotSeqs(await readdir(this.dir));
  }

  /** The newest published snapshot (sequence, size, when it was written), for operators. */
  async newest(): Promise<{ seq: number; bytes: number; at: Date } | undefined> {
    const [seq] = await this.list();
    if (seq === undefined) return undefined;
    try {
      const st = await stat(join(this.dir, fileName(seq, 'snap')));
      return { seq, bytes: st.size, at: st.mtime };
    } catch {
      return undefined; // pruned between list() and stat()
    }
  }

  /** The body of snapshot `seq`, after checking magic, sequence, length and CRC. */
  async read(seq: number): Promise<Uint8Array> {
    return (await this.readFile(seq)).body;
  }

  /** The body and commit time of snapshot `seq`, checked as read() checks them. */
  async readFile(seq: number): Promise<{ body: Uint8Array; timeMs: number | undefined }> {
    const path = join(this.dir, fileName(seq, 'snap'));
    return parseSnapshotFile(await readAligned(path), seq, path);
  }

  /** Sequence, commit time and size of each published snapshot, newest first (headers only). */
  async infos(): Promise<SnapshotInfo[]> {
    const out: SnapshotInfo[] = [];
    for (const seq of await this.list()) {
      const fh = await open(join(this.dir, fileName(seq, 'snap')), 'r').catch(() => undefined);
      if (fh === undefined) continue; // pruned meanwhile
      try {
        const head = Buffer.alloc(HEADER_BYTES);
        const { bytesRead } = await fh.read(head, 0, HEADER_BYTES, 0);
        const timeMs =
          bytesRead === HEADER_BYTES && head.subarray(0, MAGIC.length).equals(MAGIC) ? decodeTime(head) : undefined;
        out.push({ seq, timeMs, bytes: (await fh.stat()).size });
      } finally {
        await fh.close();
      }
    }
    return out;
  }

  /** Deletes every snapshot whose sequence is not in `keep`; returns the deleted sequences. */
  async prune(keep: readonly number[]): Promise<number[]> {
    const kept = new Set(keep);
    const deleted: number[] = [];
    for (const seq of await this.list()) {
      if (kept.has(seq)) continue;
      await unlink(join(this.dir, fileName(seq, 'snap')));
      deleted.push(seq);
    }
    if (deleted.length > 0) await fsyncDir(this.dir);
    return deleted;
  }
}

/** Bodies are aligned for CRoaring's frozen format (FROZEN_ALIGN in state/fragment.ts). */
const BODY_ALIGN = 32;
/** FileHandle.read takes at most 2 GiB − 1 per call. */
const READ_CHUNK = 1 << 30;

/**
 * The whole file in a buffer whose start is BODY_ALIGN-aligned (readFile's buffers are only
 * 16-byte aligned, which made every load copy the body once more to align it).
 */
async function readAligned(path: string): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    const buf = roaring.bufferAlignedAllocUnsafe(size, BODY_ALIGN);
    let done = 0;
    while (done < size) {
      const { bytesRead } = await fh.read(buf, done, Math.min(READ_CHUNK, size - done), done);
      if (bytesRead === 0) break; // truncated meanwhile: the length check reports it
      done += bytesRead;
    }
    return Buffer.from(buf.buffer, buf.byteOffset, done);
  } finally {
    await fh.close();
  }
}

/** A snapshot file's body and commit time, after checking magic, sequence, length and CRC. */
export function parseSnapshotFile(
  file: Buffer,
  seq: number,
  path: string,
): { body: Uint8Array; timeMs: number | undefined } {
  const bad = (reason: string): SnapshotCorruptError => new SnapshotCorruptError(path, reason);
  const v1 = file.subarray(0, MAGIC.length).equals(MAGIC_V1);
  const header = v1 ? HEADER_V1_BYTES : HEADER_BYTES;
  if (file.length < header + TRAILER_BYTES) {
    throw bad(`file is ${file.length} bytes, shorter than header and trailer`);
  }
  if (!v1 && !file.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw bad('bad magic (not a bitledger snapshot, or an unknown version)');
  }
  const storedSeq = Number(file.readBigUInt64LE(8));
  if (storedSeq !== seq) throw bad(`header says sequence ${storedSeq}, file name says ${seq}`);
  const length = Number(file.readBigUInt64LE(LENGTH_OFFSET));
  const actual = file.length - header - TRAILER_BYTES;
  if (length !== actual) throw bad(`header says ${length} body bytes, file holds ${actual}`);
  const body = file.subarray(header, header + length);
  if (crc32c(body) !== file.readUInt32LE(header + length)) throw bad('CRC32C mismatch');
  return { body, timeMs: v1 ? undefined : decodeTime(file) };
}

function decodeTime(header: Buffer): number | undefined {
  const t = Number(header.readBigInt64LE(TIME_OFFSET));
  return t < 0 ? undefined : t;
}

/** Header, coalesced body, trailer, then the body length patched into the header. */
async function writeBody(
  fh: FileHandle,
  seq: number,
  chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  timeMs: number | undefined,
): Promise<number> {
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeBigUInt64LE(BigInt(seq), 8);
  header.writeBigInt64LE(BigInt(timeMs ?? -1), TIME_OFFSET);
  await writeAll(fh, header);
  const staging = Buffer.allocUnsafe(STAGING_BYTES);
  let staged = 0;
  let crc = 0;
  let length = 0;
  const emit = async (buf: Uint8Array): Promise<void> => {
    crc = crc32c(buf, crc);
    length += buf.length;
    await writeAll(fh, buf);
  };
  for await (const chunk of chunks) {
    if (staged + chunk.length > STAGING_BYTES && staged > 0) {
      await emit(staging.subarray(0, staged));
      staged = 0;
    }
    if (chunk.length >= STAGING_BYTES) await emit(chunk);
    else {
      staging.set(chunk, staged);
      staged += chunk.length;
    }
  }
  if (staged > 0) await emit(staging.subarray(0, staged));
  const trailer = Buffer.allocUnsafe(TRAILER_BYTES);
  trailer.writeUInt32LE(crc, 0);
  await writeAll(fh, trailer);
  const lengthField = Buffer.allocUnsafe(8);
  lengthField.writeBigUInt64LE(BigInt(length), 0);
  await writeAll(fh, lengthField, LENGTH_OFFSET);
  return length;
}

/**
 * A whole snapshot file in memory, byte for byte what write() stores, in a buffer aligned as
 * readAligned's (the simulator's in-memory snapshot files, storage/memory/).
 */
export function encodeSnapshotFile(seq: number, chunks: Iterable<Uint8Array>, timeMs: number | undefined): Buffer {
  // Copied as they come: a chunk may be a view the encoder reuses.
  const parts = Array.from(chunks, (c) => c.slice());
  const length = parts.reduce((n, c) => n + c.length, 0);
  const file = roaring.bufferAlignedAllocUnsafe(HEADER_BYTES + length + TRAILER_BYTES, BODY_ALIGN);
  const out = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  MAGIC.copy(out, 0);
  out.writeBigUInt64LE(BigInt(seq), 8);
  out.writeBigUInt64LE(BigInt(length), LENGTH_OFFSET);
  out.writeBigInt64LE(BigInt(timeMs ?? -1), TIME_OFFSET);
  let at = HEADER_BYTES;
  let crc = 0;
  for (const c of parts) {
    out.set(c, at);
    at += c.length;
    crc = crc32c(c, crc);
  }
  out.writeUInt32LE(crc, at);
  return out;
}
