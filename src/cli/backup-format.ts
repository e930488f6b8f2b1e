// The backup directory: self-describing, checksummed, appendable.
//   manifest.json   format, version, sequence and time range, one entry per file with its sha256
//   snapshots/snap-<seq>.body   one snapshot body (the state at seq), as the server encoded it
//   log/<from>-<to>.seg   the log after it: per record seq u64 BE | commit time ms i64 BE (-1:
//                   unknown) | type u8 | length u32 BE | payload; a later backup adds segments
// The manifest is replaced atomically last, so an interrupted backup leaves the previous one
// intact (plus an unreferenced file the next run overwrites).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HistoryPoint } from '../engine/history.js';
import type { LogRecord } from '../storage/index.js';
import type { SnapshotInfo } from '../storage/snapshot-store.js';
import { UsageError } from './args.js';
import { SEGMENT_RECORD_HEAD as RECORD_HEAD } from '../engine/log-export.js';
import type { RestoreSource, TimedBatch } from './restore-source.js';

export const MANIFEST = 'manifest.json';
export const BACKUP_FORMAT = 'bitledger-backup';
export const BACKUP_VERSION = 1;

export interface BackupFile {
  readonly file: string;
  readonly bytes: number;
  readonly sha256: string;
}

export interface SegmentEntry extends BackupFile {
  readonly fromSeq: number;
  readonly toSeq: number;
}

export interface Manifest {
  readonly format: typeof BACKUP_FORMAT;
  readonly version: number;
  readonly snapshot: (BackupFile & { seq: number; time: string | null }) | null;
  readonly segments: SegmentEntry[];
  readonly range: { fromSeq: number; toSeq: number; fromTime: string | null; toTime: string | null };
}

export const sha256 = (buf: Uint8Array): string => createHash('sha256').update(buf).digest('hex');
export const segmentName = (from: number, to: number): string =>
  `log/${String(from).padStart(16, '0')}-${String(to).padStart(16, '0')}.seg`;

/** Records of a segment, regrouped into commits by their time; throws naming the offset if malformed. */
export function* decodeSegment(buf: Buffer, file: string): Generator<TimedBatch> {
  let off = 0;
  let batch: LogRecord[] = [];
  let time: number | null = null;
  let prevSeq = -1;
  while (off < buf.length) {
    if (off + RECORD_HEAD > buf.length) throw new UsageError(`backup file ${file} is truncated at byte ${off}`);
    const seq = Number(buf.readBigUInt64BE(off));
    const t = Number(buf.readBigInt64BE(off + 8));
    const len = buf.readUInt32BE(off + 17);
    if (off + RECORD_HEAD + len > buf.length)
      throw new UsageError(`backup file ${file}: record ${seq} overruns the file`);
    if (prevSeq >= 0 && seq !== prevSeq + 1)
      throw new UsageError(`backup file ${file}: sequence ${seq} follows ${prevSeq}`);
    const recTime = t < 0 ? null : t;
    if (batch.length > 0 && recTime !== time) {
      yield { timeMs: time, records: batch };
      batch = [];
    }
    time = recTime;
    batch.push({ seq, type: buf[off + 16], payload: buf.subarray(off + RECORD_HEAD, off + RECORD_HEAD + len) });
    prevSeq = seq;
    off += RECORD_HEAD + len;
  }
  if (batch.length > 0) yield { timeMs: time, records: batch };
}

export async function isBackupDir(path: string): Promise<boolean> {
  return existsSync(join(path, MANIFEST));
}

export async function readManifest(path: string): Promise<Manifest> {
  let m: Manifest;
  try {
    m = JSON.parse(await readFile(join(path, MANIFEST), 'utf8')) as Manifest;
  } catch (err) {
    throw new UsageError(`backup ${path}: ${MANIFEST} is unreadable (${(err as Error).message})`);
  }
  if (m.format !== BACKUP_FORMAT || !Array.isArray(m.segments))
    throw new UsageError(`backup ${path}: ${MANIFEST} is not a bitledger backup manifest`);
  if (m.version > BACKUP_VERSION)
    throw new UsageError(`backup ${path} has format version ${m.version}; this build reads up to ${BACKUP_VERSION}`);
  return m;
}

/** Reads a file the manifest lists and checks its size and sha256. */
async function checkedFile(path: string, f: BackupFile): Promise<Buffer> {
  const buf = await readFile(join(path, f.file)).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`backup ${path}: ${f.file} is missing or unreadable (${err.code ?? err.message})`);
  });
  if (buf.length !== f.bytes || sha256(buf) !== f.sha256)
    throw new UsageError(`backup ${path}: ${f.file} fails its checksum (damaged or altered)`);
  return buf;
}

/**
 * A backup as a restore source. Every file is checked against the manifest before anything is
 * restored, so a damaged backup is refused before the first byte is written.
 */
export async function openBackupSource(path: string): Promise<RestoreSource> {
  const m = await readManifest(path);
  const snapshot = m.snapshot === null ? undefined : await checkedFile(path, m.snapshot);
  const segments: Buffer[] = [];
  const times: { seq: number; timeMs: number | null }[] = [];
  for (const s of m.segments) {
    const buf = await checkedFile(path, s);
    for (const b of decodeSegment(buf, s.file)) times.push({ seq: b.records[0].seq, timeMs: b.timeMs });
    segments.push(buf);
  }
  const baseSeq = m.snapshot?.seq ?? 0;
  const firstSeq = m.segments[0]?.fromSeq ?? baseSeq + 1;
  const timeOf = (seq: number): number | undefined => {
    let t: number | null = null;
    for (const x of times) {
      if (x.seq > seq) break;
      t = x.timeMs;
    }
    return t ?? undefined;
  };
  const snapTime = m.snapshot?.time == null ? undefined : Date.parse(m.snapshot.time);
  const oldest: HistoryPoint = { seq: baseSeq, timeMs: snapTime };
  const newest: HistoryPoint = {
    seq: m.range.toSeq,
    timeMs: m.range.toSeq === baseSeq ? snapTime : timeOf(m.range.toSeq),
  };
  const snapInfo: SnapshotInfo[] =
    m.snapshot === null ? [] : [{ seq: baseSeq, timeMs: snapTime, bytes: m.snapshot.bytes }];
  return {
    describe: `backup ${path}`,
    history: { oldest, newest, snapshots: snapInfo },
    log: {
      firstSeq,
      commitTime: async (seq) => timeOf(seq),
      async seqAtTime(timeMs) {
        for (const x of times) if (x.timeMs !== null && x.timeMs > timeMs) return x.seq - 1;
        return m.range.toSeq;
      },
    },
    async readSnapshot() {
      if (snapshot === undefined) throw new UsageError(`backup ${path} holds no snapshot`);
      return { body: snapshot, timeMs: snapTime };
    },
    async *batches(fromSeq, toSeq) {
      for (let i = 0; i < segments.length; i++) {
        for (const b of decodeSegment(segments[i], m.segments[i].file)) {
          const records = b.records.filter((r) => r.seq >= fromSeq && r.seq <= toSeq);
          if (records.length > 0) yield { timeMs: b.timeMs, records };
        }
      }
    },
    close: async () => undefined,
  };
}
