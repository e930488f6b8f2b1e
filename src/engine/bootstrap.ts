// Startup: newest readable snapshot, then replay of the log suffix through apply().
import type { Logger } from 'pino';
import { decodeEvent } from '../events/codec.js';
import { apply } from '../events/apply.js';
import { Holder } from '../state/holder.js';
import { type Clock, systemClock } from '../util/clock.js';
import type { LogStore, SnapshotFiles } from './ports.js';
import { ReplayCoalescer } from './replay-coalescer.js';
import { captureSnapshot, decodeSnapshot } from './snapshot-codec.js';

export class StartupError extends Error {
  override name = 'StartupError';
}

export interface BootstrapReport {
  snapshotSeq: number;
  replayed: number;
  fromSeq: number;
  toSeq: number;
  ms: number;
}

/** Replay progress: called after each batch (a returned promise is awaited: tests slow replay). */
export type ReplayProgressListener = (done: number, total: number) => void | Promise<void>;

/**
 * Snapshots written while a long log suffix is replayed (a server start, the seal of a restore):
 * every `everyEvents` replayed events, at the end of a group commit committed at or after
 * `sinceMs` (the history window's start), so a time-travel read inside the window replays at most that many
 * events from the nearest snapshot, however long the suffix was.
 */
export interface ReplayCheckpoints {
  everyEvents: number;
  sinceMs: number;
  files: Pick<SnapshotFiles, 'write'>;
}

/** Replay logs its progress at this interval, so a long startup is visibly moving. */
const PROGRESS_LOG_MS = 2_000;

export async function bootstrap(
  log: LogStore,
  snapshots: SnapshotFiles,
  logger: Logger,
  targetSeq = Infinity,
  onProgress?: ReplayProgressListener,
  clock: Clock = systemClock,
  checkpoints?: ReplayCheckpoints,
): Promise<{ holder: Holder; report: BootstrapReport }> {
  const started = clock.monotonic();
  let holder = new Holder();
  for (const seq of await snapshots.list()) {
    if (seq > targetSeq) continue;
    try {
      const body = await snapshots.read(seq);
      const h = new Holder();
      for (const e of decodeSnapshot(body, { lazy: true })) apply(h, e);
      h.appliedSeq = seq;
      holder = h;
      logger.info({ seq }, 'loaded snapshot');
      break;
    } catch (err) {
      logger.warn({ seq, err: String(err) }, 'snapshot unreadable; falling back to an older one and a longer replay');
    }
  }
  const from = holder.appliedSeq + 1;
  const to = Math.min(log.lastSeq, targetSeq);
  if (log.lastSeq >= from && log.firstSeq > from) {
    throw new StartupError(
      `the log starts at sequence ${log.firstSeq} but the newest usable snapshot ends at ${holder.appliedSeq}: ` +
        `events ${from}..${log.firstSeq - 1} are missing. Restore the data directory from a backup, or repair the snapshot files.`,
    );
  }
  if (holder.appliedSeq > log.lastSeq) {
    throw new StartupError(
      `snapshot at sequence ${holder.appliedSeq} is ahead of the log (last ${log.lastSeq}); the log was truncated or replaced`,
    );
  }
  let replayed = 0;
  if (to >= from) replayed = await replay(log, holder, { from, to, started }, logger, clock, onProgress, checkpoints);
  const report = {
    snapshotSeq: from - 1,
    replayed,
    fromSeq: from,
    toSeq: holder.appliedSeq,
    ms: Math.round(clock.monotonic() - started),
  };
  logger.info(
    report,
    `replayed ${replayed} events (seq ${from}..${holder.appliedSeq}) on snapshot ${from - 1} in ${report.ms} ms`,
  );
  return { holder, report };
}

/** Replays from..to onto `holder` (private until bootstrap returns); returns the events replayed. */
async function replay(
  log: LogStore,
  holder: Holder,
  { from, to, started }: { from: number; to: number; started: number },
  logger: Logger,
  clock: Clock,
  onProgress: ReplayProgressListener | undefined,
  checkpoints: ReplayCheckpoints | undefined,
): Promise<number> {
  // The holder is private until bootstrap returns, so pending merged records may span batches.
  const coalescer = new ReplayCoalescer(holder);
  let replayed = 0;
  let sinceCheckpoint = 0;
  let last = holder.appliedSeq;
  const total = to - from + 1;
  let loggedAt = clock.monotonic();
  await onProgress?.(0, total);
  /** The group commit a checkpoint waits for: it is written once its last record is applied. */
  let due: { endSeq: number; timeMs: number } | undefined;
  for await (const batch of log.readBatches(from, to)) {
    // Decoded and taken one at a time, so decoding may reuse scratch bitmaps.
    for (const rec of batch) {
      coalescer.add(decodeEvent(rec.type, rec.payload, true));
      sinceCheckpoint++;
      if (due !== undefined && rec.seq === due.endSeq && checkpoints !== undefined) {
        coalescer.flush();
        holder.appliedSeq = rec.seq;
        await checkpoints.files.write(rec.seq, captureSnapshot(holder).chunks, due.timeMs);
        logger.info({ seq: rec.seq }, 'replay checkpoint: snapshot written');
        due = undefined;
        sinceCheckpoint = 0;
      }
    }
    last = batch[batch.length - 1].seq;
    replayed += batch.length;
    if (checkpoints !== undefined && due === undefined && sinceCheckpoint >= checkpoints.everyEvents && last < to) {
      const next = await commitHolding(log, last + 1);
      if (next !== undefined && next.timeMs >= checkpoints.sinceMs && next.endSeq <= to) due = next;
    }
    if (clock.monotonic() - loggedAt >= PROGRESS_LOG_MS) {
      loggedAt = clock.monotonic();
      const perSec = Math.round(replayed / ((loggedAt - started) / 1000));
      logger.info(
        { done: replayed, total, perSec },
        `replaying: ${replayed}/${total} events (${Math.floor((100 * replayed) / total)}%)`,
      );
    }
    await onProgress?.(replayed, total);
  }
  coalescer.flush();
  holder.appliedSeq = last;
  return replayed;
}

/**
 * The group commit holding `seq`: its last sequence and commit time (undefined for records
 * without times). A checkpoint is taken at its end: it never splits a request, nor a cluster
 * command from its CommandApplied.
 */
async function commitHolding(log: LogStore, seq: number): Promise<{ endSeq: number; timeMs: number } | undefined> {
  let holding: { firstSeq: number; timeMs: number } | undefined;
  for await (const b of log.commitBatches(seq)) {
    if (holding !== undefined) return { endSeq: b.firstSeq - 1, timeMs: holding.timeMs };
    if (b.firstSeq > seq) return undefined;
    holding = b;
  }
  return holding === undefined ? undefined : { endSeq: log.lastSeq, timeMs: holding.timeMs };
}
