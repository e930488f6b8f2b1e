// `bitledger backup --url http://HOST:PORT --to PATH` (a running server, over HTTP, while writes
// go on) or `--data-dir DIR --to PATH` (offline): the newest snapshot plus the log after it into
// a self-describing backup directory (src/cli/backup-format.ts). A later run to the same PATH
// adds only the log since the last one.
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { once } from 'node:events';
import type { Logger } from 'pino';
import { readHistory, rfc3339 } from '../engine/history.js';
import { SEGMENT_RECORD_HEAD, encodeSegmentBatch, logBatches } from '../engine/log-export.js';
import { EventLog, SnapshotStore } from '../storage/index.js';
import { LEVELDB_SUBDIR } from '../storage/data-dir.js';
import { fsyncDir } from '../storage/durable-fs.js';
import { UsageError, parseArgs, required } from './args.js';
import {
  BACKUP_FORMAT,
  BACKUP_VERSION,
  MANIFEST,
  isBackupDir,
  readManifest,
  segmentName,
  sha256,
  type Manifest,
  type SegmentEntry,
} from './backup-format.js';
import { backupCluster, clusterOf } from './cluster-backup.js';
import { progress } from './progress.js';

const FLAGS = ['url', 'data-dir', 'to', 'log-level'];

interface Point {
  seq: number;
  timeMs: number | undefined;
}

/** Where a backup reads from: a running server (HTTP) or a stopped server's data directory. */
export interface BackupOrigin {
  readonly describe: string;
  history(): Promise<{ newest: Point; snapshots: Point[] }>;
  snapshot(seq: number): Promise<Uint8Array>;
  /** Records from..to in segment encoding, in chunks of any size. */
  log(from: number, to: number): AsyncIterable<Uint8Array>;
  close(): Promise<void>;
}

export async function backupCommand(
  argv: readonly string[],
  logger: Logger,
  out: (line: string) => void,
): Promise<void> {
  const args = parseArgs('backup', argv, FLAGS);
  const to = resolve(required('backup', args, 'to'));
  const url = args.get('url');
  const dir = args.get('data-dir');
  if ((url === undefined) === (dir === undefined))
    throw new UsageError('backup: give --url http://HOST:PORT (a running server) or --data-dir DIR (a stopped one)');
  if (url !== undefined) {
    // A cluster member: every node's snapshot with the positions it covers (cluster-backup.ts).
    const cluster = await clusterOf(url.replace(/\/+$/, ''));
    if (cluster !== undefined) return backupCluster(cluster, to, out);
  }
  const origin = url !== undefined ? remoteOrigin(url) : await localOrigin(resolve(dir as string), logger);
  try {
    await backup(origin, to, out);
  } finally {
    await origin.close();
  }
}

export async function backup(origin: BackupOrigin, path: string, out: (line: string) => void): Promise<Manifest> {
  const started = performance.now();
  const existing = (await isBackupDir(path)) ? await readManifest(path) : undefined;
  if (existing === undefined && existsSync(path) && (await readdir(path)).length > 0) {
    throw new UsageError(
      `backup: ${path} is not empty and holds no backup (${MANIFEST}); back up into a new directory or an earlier backup`,
    );
  }
  const h = await origin.history();
  const toSeq = h.newest.seq;
  let snapshot = existing?.snapshot ?? null;
  let bytes = 0;
  let from: number;
  if (existing !== undefined) from = existing.range.toSeq + 1;
  else {
    await mkdir(join(path, 'snapshots'), { recursive: true });
    const newest = h.snapshots.find((s) => s.seq > 0);
    if (newest !== undefined) {
      const body = await origin.snapshot(newest.seq);
      const file = `snapshots/snap-${String(newest.seq).padStart(16, '0')}.body`;
      await writeFile(join(path, file), body, { flush: true });
      snapshot = { file, bytes: body.length, sha256: sha256(body), seq: newest.seq, time: rfc3339(newest.timeMs) };
      bytes += body.length;
    }
    from = (snapshot?.seq ?? 0) + 1;
  }
  const segments: SegmentEntry[] = [...(existing?.segments ?? [])];
  if (from <= toSeq) {
    const seg = await writeSegment(origin, path, from, toSeq, out);
    segments.push(seg);
    bytes += seg.bytes;
  }
  const fromSeq = snapshot?.seq ?? 0;
  const fromTime = existing?.range.fromTime ?? snapshot?.time ?? null;
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    snapshot,
    segments,
    range: {
      fromSeq,
      toSeq: Math.max(toSeq, existing?.range.toSeq ?? 0),
      fromTime,
      toTime: rfc3339(h.newest.timeMs) ?? existing?.range.toTime ?? null,
    },
  };
  // The manifest goes last and atomically: until it is renamed, the previous backup stands.
  const tmp = join(path, `${MANIFEST}.tmp`);
  await writeFile(tmp, JSON.stringify(manifest, null, 2) + '\n', { flush: true });
  await rename(tmp, join(path, MANIFEST));
  await fsyncDir(path);
  const secs = (performance.now() - started) / 1000;
  const added = from <= toSeq ? `added sequences ${from}..${toSeq}` : 'already up to date';
  out(
    `backup ${path}: ${added}; holds sequences ${fromSeq}..${manifest.range.toSeq} (${manifest.range.fromTime ?? 'time unknown'} .. ${manifest.range.toTime ?? 'time unknown'}); ${(bytes / 1e6).toFixed(1)} MB in ${secs.toFixed(2)} s from ${origin.describe}`,
  );
  return manifest;
}

async function writeSegment(
  origin: BackupOrigin,
  path: string,
  from: number,
  to: number,
  out: (line: string) => void,
): Promise<SegmentEntry> {
  await mkdir(join(path, 'log'), { recursive: true });
  const file = segmentName(from, to);
  const full = join(path, file);
  const stream = createWriteStream(full);
  const hash = createHash('sha256');
  const tally = new SegmentTally(from);
  const bar = progress('backup', to - from + 1, 'events', out);
  let bytes = 0;
  try {
    for await (const chunk of origin.log(from, to)) {
      tally.feed(chunk);
      hash.update(chunk);
      bytes += chunk.length;
      if (!stream.write(chunk)) await once(stream, 'drain');
      bar.update(tally.records);
    }
    stream.end();
    await once(stream, 'finish');
  } catch (err) {
    stream.destroy();
    await unlink(full).catch(() => undefined);
    throw err;
  } finally {
    bar.stop();
  }
  if (!tally.complete || tally.lastSeq !== to) {
    await unlink(full).catch(() => undefined);
    throw new UsageError(
      `backup: the log stream ended at sequence ${tally.lastSeq}, expected ${to}; nothing was added, run the backup again`,
    );
  }
  return { file, bytes, sha256: hash.digest('hex'), fromSeq: from, toSeq: to };
}

/** Follows record boundaries across chunks: counts records and checks the sequences run on. */
class SegmentTally {
  records = 0;
  lastSeq: number;
  private readonly head = Buffer.alloc(SEGMENT_RECORD_HEAD);
  private fill = 0;
  private skip = 0;

  constructor(from: number) {
    this.lastSeq = from - 1;
  }

  get complete(): boolean {
    return this.fill === 0 && this.skip === 0;
  }

  feed(chunk: Uint8Array): void {
    let off = 0;
    while (off < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - off);
        this.skip -= n;
        off += n;
        continue;
      }
      const n = Math.min(SEGMENT_RECORD_HEAD - this.fill, chunk.length - off);
      this.head.set(chunk.subarray(off, off + n), this.fill);
      this.fill += n;
      off += n;
      if (this.fill < SEGMENT_RECORD_HEAD) continue;
      const seq = Number(this.head.readBigUInt64BE(0));
      if (seq !== this.lastSeq + 1)
        throw new UsageError(`backup: the log stream jumped from sequence ${this.lastSeq} to ${seq}`);
      this.lastSeq = seq;
      this.records++;
      this.skip = this.head.readUInt32BE(17);
      this.fill = 0;
    }
  }
}

function remoteOrigin(base: string): BackupOrigin {
  const url = base.replace(/\/+$/, '');
  const get = async (path: string): Promise<Response> => {
    let res: Response;
    try {
      res = await fetch(url + path);
    } catch (err) {
      throw new UsageError(`backup: cannot reach ${url} (${String((err as Error).cause ?? (err as Error).message)})`);
    }
    if (!res.ok)
      throw new UsageError(
        `backup: ${url}${path.split('?')[0]} answered ${res.status}: ${(await res.text()).slice(0, 300)}`,
      );
    return res;
  };
  const point = (p: { seq: number; time: string | null }): Point => ({
    seq: p.seq,
    timeMs: p.time === null ? undefined : Date.parse(p.time),
  });
  return {
    describe: url,
    async history() {
      const h = (await (await get('/internal/history')).json()) as {
        newest: { seq: number; time: string | null };
        snapshots: { seq: number; time: string | null }[];
      };
      return { newest: point(h.newest), snapshots: h.snapshots.map(point) };
    },
    async snapshot(seq) {
      return new Uint8Array(await (await get(`/internal/backup/snapshot/${seq}`)).arrayBuffer());
    },
    async *log(from, to) {
      const res = await get(`/internal/backup/log?from=${from}&to=${to}`);
      if (res.body === null) return;
      for await (const chunk of res.body) yield chunk;
    },
    close: async () => undefined,
  };
}

async function localOrigin(dir: string, logger: Logger): Promise<BackupOrigin> {
  if (!existsSync(join(dir, LEVELDB_SUBDIR))) throw new UsageError(`backup: no bitledger data directory at ${dir}`);
  const log = await EventLog.open(dir, { fsync: 'always', logger });
  const snapshots = await SnapshotStore.open(dir, logger);
  return {
    describe: `data directory ${dir}`,
    async history() {
      const h = await readHistory(log, snapshots, log.lastSeq);
      return { newest: h.newest, snapshots: h.snapshots.filter((s) => s.seq >= log.firstSeq - 1) };
    },
    snapshot: (seq) => snapshots.read(seq),
    async *log(from, to) {
      for await (const b of logBatches(log, from, to)) yield encodeSegmentBatch(b.records, b.timeMs);
    },
    close: () => log.close(),
  };
}
