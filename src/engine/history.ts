// The history a data directory holds: which points (sequence, commit time) can be rebuilt, from
// the snapshots and the retained log. Used by GET /internal/history, restore and time-travel
// reads, so all three agree on what is "inside the window".
import type { History, HistoryPoint, LogStore, SnapshotFiles, Target } from './ports.js';

export type { History, HistoryPoint, Target } from './ports.js';

/** A target outside the history, or one that cannot be resolved: the message names the range held. */
export class HistoryRangeError extends Error {
  override name = 'HistoryRangeError';
}

type LogView = Pick<LogStore, 'firstSeq' | 'commitTime' | 'seqAtTime'>;

/**
 * Oldest restorable point: the lowest base (the empty state at 0 while the log still starts at
 * 1, or a snapshot) from which the retained log reaches on without a gap.
 */
export async function readHistory(
  log: LogView,
  snapshots: Pick<SnapshotFiles, 'infos'>,
  newestSeq: number,
): Promise<History> {
  const infos = (await snapshots.infos()).filter((s) => s.seq <= newestSeq);
  const bases = infos
    .filter((s) => s.seq >= log.firstSeq - 1)
    .map((s): HistoryPoint => ({ seq: s.seq, timeMs: s.timeMs }));
  if (log.firstSeq <= 1) bases.push({ seq: 0, timeMs: undefined });
  const oldest = bases.reduce<HistoryPoint | undefined>(
    (a, b) => (a === undefined || b.seq < a.seq ? b : a),
    undefined,
  ) ?? { seq: newestSeq, timeMs: undefined };
  const newest = { seq: newestSeq, timeMs: newestSeq === 0 ? undefined : await log.commitTime(newestSeq) };
  return { oldest, newest, snapshots: infos };
}

export const rfc3339 = (ms: number | undefined): string | null =>
  ms === undefined ? null : new Date(ms).toISOString();

export function describeRange(h: History): string {
  const at = (p: HistoryPoint): string => `sequence ${p.seq}${p.timeMs === undefined ? '' : ` (${rfc3339(p.timeMs)})`}`;
  return `${at(h.oldest)} to ${at(h.newest)}`;
}

/** The sequence a target names, checked against the history; throws HistoryRangeError. */
export async function resolveTarget(log: LogView, h: History, target: Target): Promise<number> {
  const held = (): string => `the history holds ${describeRange(h)}`;
  if ('seq' in target) {
    if (target.seq < h.oldest.seq || target.seq > h.newest.seq)
      throw new HistoryRangeError(`sequence ${target.seq} is outside the history: ${held()}`);
    return target.seq;
  }
  const when = rfc3339(target.timeMs);
  if (h.newest.timeMs === undefined)
    throw new HistoryRangeError(
      `time ${when}: no retained record has a known commit time (restore by sequence); ${held()}`,
    );
  if (target.timeMs >= h.newest.timeMs) return h.newest.seq;
  const seq = Math.min(await log.seqAtTime(target.timeMs), h.newest.seq);
  // A time before every retained record resolves to the base below the log; it is inside only
  // when that base is a snapshot known to be committed by then (seq 0 has no time: by seq only).
  const belowLog = seq === log.firstSeq - 1 && (h.oldest.seq !== seq || h.oldest.timeMs === undefined);
  const tooOld = seq < h.oldest.seq || (h.oldest.timeMs !== undefined && target.timeMs < h.oldest.timeMs) || belowLog;
  if (tooOld) throw new HistoryRangeError(`time ${when} is outside the history: ${held()}`);
  return seq;
}

/** "2026-11-24T14:03:00Z" or Unix seconds ("1764000000", fractions allowed) → ms; undefined if neither. */
export function parseTimeArg(text: string): number | undefined {
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
