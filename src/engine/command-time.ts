// Cluster mode's past states (docs/CLUSTER.md, "History"): the cluster as of a time T is each
// partition of its topics (NAME.meta, and every NAME.log partition this node holds) as of its
// last command stamped at or before T. A node's log interleaves its partitions in the order it
// applied them, which is not the order of their times, so no prefix of it is that state: it is
// rebuilt by a filtered replay instead. Every command's commit ends with a CommandApplied
// (events/types.ts) naming its partition and time; from a base whose partitions all stand at or
// before T (a snapshot whose marks' newest times are ≤ T, or the empty state), the replay applies
// each command until its partition's first command stamped after T, and skips that partition's
// records from there on. Partitions hold disjoint shards, so skipping one never changes another.
import type { Logger } from 'pino';
import { DomainError } from '../domain/errors.js';
import { EVENT_TYPE_CODES, decodeEvent } from '../events/codec.js';
import type { Event } from '../events/types.js';
import { apply } from '../events/apply.js';
import { Holder, commandMarkKey } from '../state/holder.js';
import type { ReadonlyHolder } from '../state/readonly.js';
import type { Clock } from '../util/clock.js';
import { HistoryRangeError, rfc3339 } from './history.js';
import type { LogRecord, LogStore, SnapshotFiles } from './ports.js';
import { ReplayCoalescer } from './replay-coalescer.js';
import { decodeSnapshot, encodeSnapshot } from './snapshot-codec.js';

const MARK = EVENT_TYPE_CODES.CommandApplied;
/** The offset of a CommandApplied that marks a partition installed from a snapshot (events/types.ts). */
export const INSTALLED = '';

/**
 * Which records of a replay belong to the state as of `timeMs`. A command's CommandApplied closes
 * its commit's group, so the records since the previous mark are held back until it comes.
 */
export class CommandTimeFilter {
  /** Newest command time per partition so far (from the base's marks on). */
  private readonly newest = new Map<string, number>();
  /** Partitions that reached a command stamped after T: nothing more of them is applied. */
  private readonly closed = new Set<string>();
  /** Records since the last mark (the command the next mark closes). */
  private pending: LogRecord[] = [];

  constructor(
    readonly timeMs: number,
    base: ReadonlyHolder,
  ) {
    for (const [key, m] of base.commandMarks) this.newest.set(key, m.maxMs);
  }

  /**
   * Feeds one record; hands `apply` the events the state at T holds, in log order, once the
   * mark of their command says so (its own mark last).
   */
  take(rec: LogRecord, apply: (e: Event) => void): void {
    if (rec.type !== MARK) {
      this.pending.push(rec);
      return;
    }
    const mark = this.decide(rec);
    const held = this.pending;
    this.pending = [];
    if (mark === undefined) return;
    // Decoded one at a time and applied at once: decoding reuses scratch bitmaps.
    for (const r of held) apply(decodeEvent(r.type, r.payload, true));
    apply(mark);
  }

  /**
   * Like take() without applying: whether the record makes the state at T differ (a command of
   * an open partition with records of its own); its mark alone goes to `onMark`.
   */
  changes(rec: LogRecord, onMark: (e: Event) => void): boolean {
    if (rec.type !== MARK) {
      this.pending.push(rec);
      return false;
    }
    const mark = this.decide(rec);
    const held = this.pending.length;
    this.pending = [];
    if (mark === undefined) return false;
    if (held > 0) return true;
    onMark(mark);
    return false;
  }

  /** Records after the last mark: not a command's (a cluster node's log holds none at its end). */
  flush(apply: (e: Event) => void): void {
    for (const r of this.pending) apply(decodeEvent(r.type, r.payload, true));
    this.pending = [];
  }

  get holding(): boolean {
    return this.pending.length > 0;
  }

  /** The mark's event when its command is in the state at T; undefined (and its partition closed) else. */
  private decide(rec: LogRecord): Event | undefined {
    const e = decodeEvent(rec.type, rec.payload);
    if (e.type !== 'CommandApplied') return undefined;
    const key = commandMarkKey(e.topic, e.partition);
    const newest = Math.max(this.newest.get(key) ?? e.timeMs, e.timeMs);
    // A partition installed here from another holder's snapshot newer than T: this node does not
    // hold its state at T (another holder may).
    if (e.offset === INSTALLED && newest > this.timeMs && !this.closed.has(key))
      throw new DomainError(
        'unavailable',
        `partition ${e.partition} was taken over here from a snapshot newer than ${rfc3339(this.timeMs)}`,
      );
    if (this.closed.has(key) || newest > this.timeMs) {
      this.closed.add(key);
      return undefined;
    }
    this.newest.set(key, newest);
    return e;
  }
}

/** The newest command time of a state's marks (-Infinity: no command applied yet). */
function newestMark(h: Holder): number {
  let max = -Infinity;
  for (const m of h.commandMarks.values()) max = Math.max(max, m.maxMs);
  return max;
}

/**
 * The newest base for T: a retained snapshot (newest first) from which the log continues and
 * whose partitions all stand at or before T, else the empty state when the log starts at 1.
 */
async function baseFor(
  log: Pick<LogStore, 'firstSeq'>,
  snapshots: Pick<SnapshotFiles, 'infos' | 'read'>,
  timeMs: number,
  logger: Logger,
): Promise<{ holder: Holder; seq: number }> {
  let oldest: number | undefined;
  for (const info of await snapshots.infos()) {
    if (info.seq < log.firstSeq - 1) continue;
    let h: Holder;
    try {
      h = new Holder();
      for (const e of decodeSnapshot(await snapshots.read(info.seq), { lazy: true })) apply(h, e);
    } catch (err) {
      logger.warn({ seq: info.seq, err: String(err) }, 'snapshot unreadable; trying an older one');
      continue;
    }
    const newest = newestMark(h);
    oldest = newest;
    if (newest <= timeMs) {
      h.appliedSeq = info.seq;
      return { holder: h, seq: info.seq };
    }
  }
  if (log.firstSeq <= 1) return { holder: new Holder(), seq: 0 };
  const from = oldest === undefined ? 'none of its snapshots is readable' : `it holds from ${rfc3339(oldest)} on`;
  throw new HistoryRangeError(
    `time ${rfc3339(timeMs)} is outside the history of the cluster this node keeps (--history-retention): ${from}`,
  );
}

/** One past state: the holder, the filter that built it and the last sequence it covers. */
interface TimeState {
  holder: Holder;
  filter: CommandTimeFilter;
  baseSeq: number;
  toSeq: number;
}

interface Entry {
  /** The state, serialized: each use first checks it against the log since (current()). */
  state: Promise<TimeState>;
  /** The holder counted in `bytes` (a state built anew replaces it). */
  holder?: Holder;
  bytes: number;
}

/**
 * Past states by time, in a small LRU bounded by their encoded size. A state built up to one
 * sequence stays valid while the records after it change nothing it holds (commands of closed
 * partitions, or none): a later read checks them without decoding and reuses it; otherwise the
 * state is built again (a state in use by a query is never changed under it).
 */
export class CommandTimeStates {
  private readonly entries = new Map<number, Entry>();
  private bytes = 0;

  constructor(
    private readonly log: LogStore,
    private readonly snapshots: SnapshotFiles,
    private readonly durableSeq: () => number,
    private readonly logger: Logger,
    /** Times the build for the log line (the engine's clock). */
    private readonly clock: Clock,
    private readonly maxBytes = 256 * 1024 * 1024,
  ) {}

  async at(timeMs: number): Promise<Holder> {
    const to = this.durableSeq();
    let e = this.entries.get(timeMs);
    if (e !== undefined) {
      this.entries.delete(timeMs);
      this.entries.set(timeMs, e);
      const prev = e.state;
      e.state = prev.then((s) => this.current(s, to)).catch(() => this.build(timeMs, to));
    } else {
      e = { state: this.build(timeMs, to), bytes: 0 };
      this.entries.set(timeMs, e);
    }
    try {
      const s = await e.state;
      this.account(timeMs, e, s.holder);
      return s.holder;
    } catch (err) {
      if (this.entries.get(timeMs) === e) this.entries.delete(timeMs);
      this.bytes -= e.bytes;
      throw err;
    }
  }

  private async build(timeMs: number, to: number): Promise<TimeState> {
    const started = this.clock.monotonic();
    const base = await baseFor(this.log, this.snapshots, timeMs, this.logger);
    const state: TimeState = {
      holder: base.holder,
      filter: new CommandTimeFilter(timeMs, base.holder),
      baseSeq: base.seq,
      toSeq: base.seq,
    };
    const coalescer = new ReplayCoalescer(state.holder);
    let applied = 0;
    const add = (e: Event): void => {
      coalescer.add(e);
      applied++;
    };
    for await (const batch of this.log.readBatches(base.seq + 1, to)) {
      for (const rec of batch) state.filter.take(rec, add);
      state.toSeq = batch[batch.length - 1].seq;
    }
    state.filter.flush(add);
    coalescer.flush();
    state.holder.appliedSeq = state.toSeq;
    this.logger.info(
      {
        at: rfc3339(timeMs),
        base: base.seq,
        to: state.toSeq,
        applied,
        ms: Math.round(this.clock.monotonic() - started),
      },
      'cluster state as of a time built',
    );
    return state;
  }

  /** `s` if the records after it up to `to` change nothing it holds, else a state built anew. */
  private async current(s: TimeState, to: number): Promise<TimeState> {
    if (to <= s.toSeq) return s;
    const filter = s.filter;
    // A mark of an open partition with no records moves only the marks (no query reads them).
    const onMark = (e: Event): void => apply(s.holder, e);
    for await (const batch of this.log.readBatches(s.toSeq + 1, to)) {
      for (const rec of batch) if (filter.changes(rec, onMark)) return this.build(filter.timeMs, to);
      s.toSeq = batch[batch.length - 1].seq;
    }
    if (filter.holding) return this.build(filter.timeMs, to);
    return s;
  }

  private account(timeMs: number, e: Entry, holder: Holder): void {
    if (e.holder !== holder) {
      this.bytes -= e.bytes;
      e.holder = holder;
      e.bytes = Math.max(1, encodeSnapshot(holder).bytes);
      this.bytes += e.bytes;
    }
    for (const [t, other] of this.entries) {
      if (this.bytes <= this.maxBytes) return;
      if (t === timeMs || other.bytes === 0) continue;
      this.entries.delete(t);
      this.bytes -= other.bytes;
    }
  }
}
