// `bitledger restore --from PATH --data-dir NEW [--to-seq N | --to-time T]`: the state as of a
// point, rebuilt into a new data directory that `bitledger server` then serves. The newest
// snapshot at or before the target is copied, then the log after it up to exactly the last
// record at or before the target (with the records' original commit times, so the new directory
// keeps that history), then the result is replayed through the server's own bootstrap/apply path
// and snapshotted at the target. Every check runs before the first byte is written.
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { HistoryRangeError, describeRange, resolveTarget, rfc3339, type Target } from '../engine/history.js';
import { sealRestore } from '../engine/restore-seal.js';
import { EventLog, SnapshotStore } from '../storage/index.js';
import { LEVELDB_SUBDIR } from '../storage/data-dir.js';
import { UsageError, parseArgs, required, seqArg, timeArg } from './args.js';
import { isBackupDir, openBackupSource } from './backup-format.js';
import { progress } from './progress.js';
import { ClusterRestoreError, restoreCluster } from '../cluster/restore/restore.js';
import { readClusterBackup } from './cluster-backup.js';
import { restoreFromKafka } from './restore-kafka.js';
import { openDataDirSource, restoreCheckpoints, type RestoreSource } from './restore-source.js';

const FLAGS = ['from', 'data-dir', 'to-seq', 'to-time', 'from-kafka', 'kafka-brokers', 'cluster-name', 'log-level'];

export async function restoreCommand(
  argv: readonly string[],
  logger: Logger,
  out: (line: string) => void,
): Promise<void> {
  const args = parseArgs('restore', argv, FLAGS);
  const dest = resolve(required('restore', args, 'data-dir'));
  const toSeq = seqArg('restore', args, 'to-seq');
  const toTime = timeArg('restore', args, 'to-time');
  if (toSeq !== undefined && toTime !== undefined)
    throw new UsageError('restore: give --to-seq or --to-time, not both');
  const target: Target | undefined =
    toSeq !== undefined ? { seq: toSeq } : toTime !== undefined ? { timeMs: toTime } : undefined;
  const cluster = args.get('cluster-name');
  if (cluster !== undefined) {
    if (toSeq !== undefined)
      throw new UsageError('restore: a cluster has no single sequence: restore it to a time (--to-time)');
    if (args.has('from-kafka')) throw new UsageError('restore: give --cluster-name or --from-kafka, not both');
    await requireEmptyDir(dest);
    await restoreClusterCommand(cluster, brokersArg(args), dest, toTime, args.get('from'), logger, out);
    return;
  }
  const topic = args.get('from-kafka');
  if (topic !== undefined) {
    if (args.has('from')) throw new UsageError('restore: give --from PATH or --from-kafka TOPIC, not both');
    await requireEmptyDir(dest);
    await restoreFromKafka(topic, brokersArg(args), dest, target, logger, out);
    return;
  }
  const from = resolve(required('restore', args, 'from'));
  if (from === dest) throw new UsageError('restore: --data-dir must be a new directory, not the source');
  await requireEmptyDir(dest);
  const source = await openSource(from, logger);
  try {
    await restore(source, dest, target, logger, out);
  } finally {
    await source.close();
  }
}

function brokersArg(args: Map<string, string>): string[] {
  return required('restore', args, 'kafka-brokers')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
}

/** The cluster NAME as of `toTime` (default: now) from its topics, and a cluster backup when given. */
async function restoreClusterCommand(
  name: string,
  brokers: string[],
  dest: string,
  toTime: number | undefined,
  from: string | undefined,
  logger: Logger,
  out: (line: string) => void,
): Promise<void> {
  const snapshots = from === undefined ? undefined : await readClusterBackup(resolve(from), name);
  try {
    const { commands } = await restoreCluster({
      name,
      brokers,
      dest,
      ...(toTime !== undefined ? { until: toTime } : {}),
      ...(snapshots !== undefined ? { from: snapshots } : {}),
      logger,
      out,
    });
    const at = toTime === undefined ? 'its newest state' : `its state as of ${rfc3339(toTime)}`;
    out(
      `restored cluster ${name} (${at}) into ${dest}: ${commands} events; start it with bitledger server --data-dir ${dest}`,
    );
  } catch (err) {
    // Nothing half-restored stays behind: the directory was empty (or absent) before.
    await rm(dest, { recursive: true, force: true });
    if (err instanceof ClusterRestoreError) throw new UsageError(err.message);
    throw err;
  }
}

async function openSource(path: string, logger: Logger): Promise<RestoreSource> {
  if (await isBackupDir(path)) return openBackupSource(path);
  if (!existsSync(join(path, LEVELDB_SUBDIR)))
    throw new UsageError(`restore: ${path} is neither a bitledger backup (no manifest.json) nor a data directory`);
  return openDataDirSource(path, logger);
}

async function requireEmptyDir(dir: string): Promise<void> {
  const entries = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    if (err.code === 'ENOTDIR') throw new UsageError(`restore: ${dir} is a file, not a directory`);
    throw err;
  });
  if (entries.length > 0) throw new UsageError(`restore: ${dir} is not empty; restore into a new or empty directory`);
}

/** Restores `source` as of `target` (default: the newest point it holds) into the empty `dest`. */
export async function restore(
  source: RestoreSource,
  dest: string,
  target: Target | undefined,
  logger: Logger,
  out: (line: string) => void,
): Promise<{ fromSeq: number; toSeq: number }> {
  const h = source.history;
  let toSeq: number;
  try {
    toSeq = target === undefined ? h.newest.seq : await resolveTarget(source.log, h, target);
  } catch (err) {
    if (err instanceof HistoryRangeError) throw new UsageError(`restore: ${err.message} (in ${source.describe})`);
    throw err;
  }
  const base = await pickBase(source, toSeq);
  let created = false;
  try {
    created = true;
    const log = await EventLog.open(dest, { fsync: 'interval', fsyncIntervalMs: 60_000, logger });
    try {
      const snapshots = await SnapshotStore.open(dest, logger);
      if (base.seq > 0) {
        await snapshots.write(base.seq, [base.body], base.timeMs);
        await log.releaseUpTo(base.seq);
      }
      const bar = progress('restore', toSeq - base.seq, 'events', out);
      let copied = 0;
      for await (const b of source.batches(base.seq + 1, toSeq)) {
        await log.append(b.records, [], { timeMs: b.timeMs });
        copied += b.records.length;
        bar.update(copied);
      }
      bar.stop();
      if (log.lastSeq !== toSeq) throw new Error(`restore copied up to sequence ${log.lastSeq}, expected ${toSeq}`);
      await sealRestore(log, snapshots, toSeq, logger, restoreCheckpoints());
      const time = await log.commitTime(toSeq);
      out(
        `restored sequence ${toSeq}${time === undefined ? '' : ` (committed ${rfc3339(time)})`} from ${source.describe}: snapshot ${base.seq} + ${toSeq - base.seq} events, into ${dest}`,
      );
      out(`the source holds ${describeRange(h)}`);
    } finally {
      await log.close();
    }
  } catch (err) {
    // Nothing half-restored stays behind: the directory was empty (or absent) before.
    if (created) await rm(dest, { recursive: true, force: true });
    throw err;
  }
  return { fromSeq: base.seq, toSeq };
}

/** The newest readable snapshot at or before `toSeq` the log continues from; 0 (empty) otherwise. */
async function pickBase(
  source: RestoreSource,
  toSeq: number,
): Promise<{ seq: number; body: Uint8Array; timeMs: number | undefined }> {
  for (const s of source.history.snapshots) {
    if (s.seq > toSeq || s.seq < source.log.firstSeq - 1) continue;
    try {
      return { seq: s.seq, ...(await source.readSnapshot(s.seq)) };
    } catch (err) {
      // An unreadable snapshot falls back to an older one (as a server start does), never silently.
      process.stderr.write(`restore: skipping snapshot ${s.seq}: ${(err as Error).message}\n`);
    }
  }
  if (source.log.firstSeq > 1)
    throw new HistoryRangeError(
      `restore: no readable snapshot at or before sequence ${toSeq} from which the log continues (log starts at ${source.log.firstSeq})`,
    );
  return { seq: 0, body: new Uint8Array(), timeMs: undefined };
}
