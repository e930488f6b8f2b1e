// The request thread's own share of a query (offload.ts): when no job waits or runs, the
// request thread and the workers it sends the phase to compute the query's shards together (as
// many threads as cores: one worker stays idle), each taking the next chunk of them from a small
// board in shared memory until none is left. Fixed shares were balanced on what the last queries
// showed; a woken worker starts late by a varying delay (the wake-up of an idle core, far more
// under load) and ran on while the request thread had nothing left, or idled while it computed.
// Claimed chunks balance every query by itself: a late worker takes fewer shards, and the
// threads end within about one small chunk of each other. The request thread claims its first
// chunk before the worker is awake, so a worker that has not started when the shards run out
// is closed instead of awaited: it will take none (its job answers at once), and the query does
// not wait for it to wake.
import type { Work } from '../../executor/run.js';
import { crossThreadMs, systemClock } from '../../util/clock.js';
import type { ThreadMarks } from './timeline.js';

/**
 * Each claim takes this part of the shards left per thread (guided self-scheduling): big chunks
 * first, few claims a query (about 2 × threads × ln(shards)), chunks of one shard at the end.
 */
const CHUNKS_PER_THREAD = 2;

/** Board word 0: the index of the next unclaimed shard; word i ≥ 1: worker job i's state. */
const NEXT = 0;
/** A worker job's states: sent, not started; started (it may claim); closed before it started; answered. */
const ARMED = 0;
const STARTED = 1;
const CLOSED = 2;
const DONE = 3;

/** What a shared phase's job carries: the board, its own word on it, and how many threads claim. */
export interface ClaimSlot {
  board: Int32Array;
  /** Its word on the board (1..jobs); 0: the request thread's, which has none. */
  slot: number;
  threads: number;
  /** Set when the query's timeline is traced (timeline.ts): this thread's claims are marked. */
  marks?: ThreadMarks;
}

/** The board of one shared phase: one per phase, made by the request thread, sent with its jobs. */
export class ShardClaims {
  readonly board: Int32Array;

  /** `jobs` workers' jobs and the request thread claim the shards. */
  constructor(readonly jobs: number) {
    this.board = new Int32Array(new SharedArrayBuffer(4 * (1 + jobs)));
  }

  get threads(): number {
    return this.jobs + 1;
  }

  /** Worker job i's slot (1..jobs). */
  slotOf(i: number): ClaimSlot {
    return { board: this.board, slot: i + 1, threads: this.threads };
  }

  /** The request thread's slot. */
  get here(): ClaimSlot {
    return { board: this.board, slot: 0, threads: this.threads };
  }

  /**
   * Once the request thread has no shard left to claim: whether worker job i had not started,
   * now closed (it takes no shard: not to be awaited). A started one may hold a chunk.
   */
  close(i: number): boolean {
    return Atomics.compareExchange(this.board, i + 1, ARMED, CLOSED) === ARMED;
  }

  /**
   * Waits, spinning, until worker job i has answered, for at most `ms`; whether it did. Once no
   * shard is left a started worker holds one chunk at most, often a shard or two: spinning through
   * it is shorter than sleeping until its answer wakes the request thread's event loop.
   */
  spinUntilDone(i: number, ms: number): boolean {
    const until = systemClock.monotonic() + ms;
    while (Atomics.load(this.board, i + 1) !== DONE) if (systemClock.monotonic() >= until) return false;
    return true;
  }
}

/** A worker's job answered (after its answer is posted: the request thread may take it at once). */
export function claimsDone(c: ClaimSlot): void {
  Atomics.store(c.board, c.slot, DONE);
}

/** A worker starting its job: false when the request thread closed it first (it claims nothing). */
export function startClaiming(c: ClaimSlot): boolean {
  return Atomics.compareExchange(c.board, c.slot, ARMED, STARTED) === ARMED;
}

/** The next chunk of the `total` shards' indexes, [from, to); undefined once all are claimed. */
export function claimChunk(c: ClaimSlot, total: number): [number, number] | undefined {
  for (;;) {
    const from = Atomics.load(c.board, NEXT);
    if (from >= total) return undefined;
    const size = Math.max(1, Math.ceil((total - from) / (CHUNKS_PER_THREAD * c.threads)));
    const to = Math.min(total, from + size);
    if (Atomics.compareExchange(c.board, NEXT, from, to) === from) return [from, to];
  }
}

/**
 * `work` over each chunk of `shards` this thread claims, until none is left: one result a chunk
 * (none when the other threads took them all), starting with `first` when it claimed one before.
 * Yields after each chunk, a shard boundary.
 */
export function* claimedWork<T>(
  c: ClaimSlot,
  shards: readonly number[],
  work: (shards: number[]) => Work<T>,
  first: [number, number] | undefined = claimChunk(c, shards.length),
): Work<T[]> {
  const out: T[] = [];
  const m = c.marks;
  for (let r = first; r !== undefined; r = claimChunk(c, shards.length)) {
    if (m !== undefined) {
      m.firstChunk ??= crossThreadMs();
      m.shards += r[1] - r[0];
      m.chunks++;
    }
    out.push(yield* work(shards.slice(r[0], r[1])));
    if (m !== undefined) m.lastChunk = crossThreadMs();
    yield;
  }
  return out;
}

/**
 * While sharing, every PROBE_ALONE_EVERY-th read that could be shared runs alone, to keep that
 * figure fresh (a probe costs one slower read); while alone, every PROBE_SHARED_EVERY-th is
 * shared, so that when a brief stall turned a node to running alone, the first shared read after
 * it turns it back within a few reads. Load that makes sharing slower turns a node to alone at
 * once either way (the way in use is measured on every read).
 */
const PROBE_ALONE_EVERY = 32;
const PROBE_SHARED_EVERY = 8;
/** Each way is judged by the median of its last WINDOW reads: one preempted or collected read does not flip it. */
const WINDOW = 5;

/**
 * Whether sharing reads with the workers pays on this machine now. Sharing is a bet that another
 * core is free: on a machine with more runnable threads than cores the worker starts late or loses
 * its core mid-chunk, and two threads streaming rows from memory take more CPU than one (25–70%
 * measured at loads 7–13 on 2 cores), so the request thread alone answers sooner. The pool keeps
 * each way's wall ms a shard over its last reads (shared, alone), uses the faster, and runs every
 * few reads the other way (PROBE_ALONE_EVERY, PROBE_SHARED_EVERY).
 */
export class ShareGain {
  private readonly shared: number[] = [];
  private readonly alone: number[] = [];
  private reads = 0;

  /** Whether the next read the workers could share runs on the request thread alone. */
  runAlone(): boolean {
    this.reads++;
    const faster = this.aloneFaster();
    return this.reads % (faster ? PROBE_SHARED_EVERY : PROBE_ALONE_EVERY) === 0 ? !faster : faster;
  }

  /**
   * A read's wall time a shard, one way or the other. A read the other way (a probe) that beat
   * the way in use replaces that way's figures: they are several reads old, and waiting for three
   * such probes to move their median kept a node on the slower way for 48 reads after each brief
   * stall (a fifth of 1-connection reads ran alone on an idle machine, issue 25).
   */
  note(alone: boolean, msPerShard: number): void {
    const inUse = this.aloneFaster();
    const last = alone ? this.alone : this.shared;
    const current = alone ? this.shared : this.alone;
    if (alone !== inUse && current.length > 0 && msPerShard < median(current)) last.length = 0;
    last.push(msPerShard);
    if (last.length > WINDOW) last.shift();
  }

  private aloneFaster(): boolean {
    return this.alone.length > 0 && this.shared.length > 0 && median(this.alone) < median(this.shared);
  }
}

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}
