// `bitledger log inspect --data-dir DIR [--from-seq N --to-seq N --since T --until T --index I]`
// lists log records; `bitledger log verify --data-dir DIR` checks every record's checksum, the
// continuity of the sequences and the snapshots, and names the first problem. verify reads the
// LevelDB directly and writes nothing (opening the log would drop a damaged tail as torn).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { rfc3339 } from '../engine/history.js';
import { logBatches } from '../engine/log-export.js';
import { decodeEvent } from '../events/codec.js';
import type { Event } from '../events/types.js';
import { EventLog, SnapshotStore, openLevelDb } from '../storage/index.js';
import { LEVELDB_SUBDIR } from '../storage/data-dir.js';
import { openEnvelope } from '../storage/envelope.js';
import { LOG_KEY_MAX, RELEASED_THROUGH_META, decodeMetaUint, logKey, logKeySeq, metaKey } from '../storage/keys.js';
import { UsageError, parseArgs, required, seqArg, timeArg } from './args.js';

/** log verify found damage: one line naming the place, exit status 1. */
export class LogVerifyError extends Error {
  override name = 'LogVerifyError';
}

export async function logCommand(argv: readonly string[], logger: Logger, out: (line: string) => void): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === 'inspect') return inspectLog(rest, logger, out);
  if (sub === 'verify') return verifyLog(rest, logger, out);
  throw new UsageError(`log: expected a subcommand: log inspect | log verify (got ${sub ?? 'nothing'})`);
}

function dataDirArg(command: string, args: Map<string, string>): string {
  const dir = resolve(required(command, args, 'data-dir'));
  if (!existsSync(join(dir, LEVELDB_SUBDIR))) throw new UsageError(`${command}: no bitledger data directory at ${dir}`);
  return dir;
}

async function inspectLog(argv: readonly string[], logger: Logger, out: (line: string) => void): Promise<void> {
  const args = parseArgs('log inspect', argv, [
    'data-dir',
    'from-seq',
    'to-seq',
    'since',
    'until',
    'index',
    'log-level',
  ]);
  const dir = dataDirArg('log inspect', args);
  const index = args.get('index');
  const since = timeArg('log inspect', args, 'since');
  const until = timeArg('log inspect', args, 'until');
  const log = await EventLog.open(dir, { fsync: 'always', logger });
  try {
    let from = Math.max(seqArg('log inspect', args, 'from-seq') ?? log.firstSeq, log.firstSeq);
    let to = Math.min(seqArg('log inspect', args, 'to-seq') ?? log.lastSeq, log.lastSeq);
    if (since !== undefined) from = Math.max(from, (await log.seqAtTime(since - 1)) + 1);
    if (until !== undefined) to = Math.min(to, await log.seqAtTime(until));
    out(`log ${dir}: retained ${log.firstSeq}..${log.lastSeq}; listing ${from}..${to}`);
    out('seq\ttime\ttype\tindex/field\tbytes');
    let listed = 0;
    for await (const b of logBatches(log, from, to)) {
      for (const r of b.records) {
        const e = decodeEvent(r.type, r.payload);
        const where = target(e);
        if (index !== undefined && !where.startsWith(`${index}/`) && where !== index) continue;
        out(`${r.seq}\t${rfc3339(b.timeMs ?? undefined) ?? '-'}\t${e.type}\t${where}\t${r.payload.length}`);
        listed++;
      }
    }
    out(`${listed} record(s)`);
  } finally {
    await log.close();
  }
}

function target(e: Event): string {
  if ('index' in e) return 'field' in e && e.field !== '' ? `${e.index}/${e.field}` : e.index;
  if ('ingest' in e) return `ingest ${e.ingest}`;
  if ('name' in e) return `ingest ${e.name}`;
  return '-';
}

async function verifyLog(argv: readonly string[], logger: Logger, out: (line: string) => void): Promise<void> {
  const args = parseArgs('log verify', argv, ['data-dir', 'log-level']);
  const dir = dataDirArg('log verify', args);
  const db = await openLevelDb(dir);
  let first = 0;
  let last = 0;
  try {
    const raw = await db.get(metaKey(RELEASED_THROUGH_META));
    const floor = raw === undefined ? 0 : decodeMetaUint(raw, RELEASED_THROUGH_META);
    let expected = -1;
    const it = db.iterator({ gt: logKey(floor), lte: LOG_KEY_MAX, fillCache: false });
    try {
      for (;;) {
        const entries = await it.nextv(1000);
        if (entries.length === 0) break;
        for (const [key, value] of entries) {
          const seq = logKeySeq(key);
          if (seq === undefined)
            throw new LogVerifyError(
              `log verify: malformed log key 0x${key.toString('hex')} after sequence ${expected - 1}`,
            );
          if (expected < 0) first = seq;
          else if (seq !== expected)
            throw new LogVerifyError(
              `log verify: gap: records ${expected}..${seq - 1} are missing (sequence ${expected - 1} is followed by ${seq})`,
            );
          const rec = openEnvelope(seq, value);
          if (typeof rec === 'string') throw new LogVerifyError(`log verify: record ${seq} is damaged: ${rec}`);
          last = seq;
          expected = seq + 1;
        }
      }
    } finally {
      await it.close();
    }
    if (expected < 0) first = floor + 1;
    if (first > floor + 1 && expected >= 0)
      throw new LogVerifyError(
        `log verify: gap: records ${floor + 1}..${first - 1} are missing (the log was released through ${floor} and continues at ${first})`,
      );
  } finally {
    await db.close();
  }
  const snapshots = await SnapshotStore.open(dir, logger);
  const seqs = await snapshots.list();
  for (const seq of seqs) {
    try {
      await snapshots.read(seq);
    } catch (err) {
      throw new LogVerifyError(`log verify: snapshot ${seq} is damaged: ${(err as Error).message}`);
    }
    if (seq > last && last >= first)
      throw new LogVerifyError(`log verify: snapshot ${seq} is ahead of the log (last record ${last})`);
  }
  const base = seqs.find((s) => s >= first - 1);
  if (first > 1 && base === undefined)
    throw new LogVerifyError(
      `log verify: the log starts at ${first} but no snapshot is at or after ${first - 1}: records 1..${first - 1} are neither in a snapshot nor in the log`,
    );
  out(
    `log verify ${dir}: OK: records ${first}..${last} (${Math.max(0, last - first + 1)}) with valid checksums and no gaps; snapshots ${seqs.length === 0 ? 'none' : seqs.join(', ')} valid`,
  );
}
