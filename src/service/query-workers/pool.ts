// The request thread's side of the query workers: N worker threads (worker.ts), each fed every
// publication of the engine's state (engine/frozen-feed.ts) before any job sent after it, so a
// job always runs on a state at least as new as the last acknowledged write, and never on one
// that is not durable. Jobs go to every worker with a share of the shards; the answers are
// merged here. A client that goes away cancels its jobs through a shared board the workers
// read between shards.
import { MessageChannel, type MessagePort, type Worker, receiveMessageOnPort } from 'node:worker_threads';
import type { Logger } from 'pino';
import { DomainError } from '../../domain/errors.js';
import type { StatePublisher } from '../../engine/ports.js';
import { ShareGain, type ShardClaims } from './here-share.js';
import { type QueryTimeline, newMarks } from './timeline.js';
import { siblingModule, startWorker } from '../../util/worker-thread.js';
import { CANCEL_SLOTS, type FromWorker, type Job, type ToWorker } from './protocol.js';

type JobAnswer = Extract<FromWorker, { kind: 'done' }>;

interface Pending {
  resolve: (a: JobAnswer) => void;
  reject: (e: Error) => void;
}

class QueryWorker {
  readonly pending = new Map<number, Pending>();
  readonly cancels = new Int32Array(new SharedArrayBuffer(4 * CANCEL_SLOTS));
  readonly thread: Worker;
  readonly ready: Promise<void>;

  /**
   * The worker's answers: a port of their own, so that the request thread can also take them
   * without a turn of its event loop (receive()), as a shared phase does once the worker is done.
   */
  private readonly answers: MessagePort;

  constructor(url: URL, onExit: (w: QueryWorker, err: Error) => void) {
    const { port1, port2 } = new MessageChannel();
    this.answers = port1;
    const options = { workerData: { cancels: this.cancels.buffer, answers: port2 }, transferList: [port2] };
    this.thread = startWorker(url, options);
    this.ready = new Promise<void>((resolve, reject) => {
      this.thread.once('error', reject);
      this.thread.once('message', () => resolve());
    });
    port1.on('message', (m: FromWorker) => this.answer(m));
    // The thread keeps the process alive while it runs; its answers' port need not.
    port1.unref();
    this.thread.on('error', (err) => onExit(this, err));
    this.thread.on('exit', (code) => onExit(this, new Error(`query worker exited with code ${code}`)));
  }

  /** ms this worker spent on jobs (the slices of each, summed, as the worker measured them). */
  busyMs = 0;

  private answer(m: FromWorker): void {
    if (m.kind === 'ready') return;
    this.busyMs += m.busyMs ?? 0;
    const p = this.pending.get(m.id);
    if (p === undefined) return;
    this.pending.delete(m.id);
    if (m.kind === 'done') p.resolve(m);
    else p.reject(m.code !== undefined ? new DomainError(m.code, m.message) : new Error(m.message));
  }

  send(m: ToWorker): void {
    this.thread.postMessage(m);
  }

  /** The answers posted so far, taken now (their jobs' promises settle at the next microtask). */
  receive(): void {
    for (let m = receiveMessageOnPort(this.answers); m !== undefined; m = receiveMessageOnPort(this.answers))
      this.answer(m.message as FromWorker);
  }

  async terminate(): Promise<void> {
    await this.thread.terminate();
    this.answers.close();
  }
}

/** What the pool did (tests, /metrics). */
export interface QueryWorkerStats {
  /** Jobs sent (one per worker share of a query phase). */
  jobs: number;
  /** Jobs that ended with an error, the cancelled and the timed out included. */
  failed: number;
  /** Jobs whose client went away while they ran. */
  cancelled: number;
  /** Query phases whose first share the request thread computed (here-share.ts). */
  sharedHere: number;
  /** Of those, phases a write ended (the workers then read the whole query). */
  stateMoved: number;
}

/** Each worker's state now (/metrics). */
export interface QueryWorkerLoad {
  /** Jobs sent to it and not answered yet (running or waiting their turn). */
  queued: number;
  /** Seconds it spent running jobs since it started. */
  busySeconds: number;
}

/** Fewer shards than this run on the request thread: two messages cost more than their work. */
export const MIN_WORKER_SHARDS = 2;

/**
 * Rows holding fewer bits than this, all shards together, are cheaper to combine here than to
 * hand over: 8M bits of 10%-dense rows intersect in about 130 µs (bitset containers; sparse rows
 * take longer), about what a job's hand-overs cost (work-estimate.ts).
 */
export const MIN_WORKER_BITS = 1 << 23;

/**
 * A started worker's last chunk after the request thread's: mostly a shard or two (tens of µs),
 * less than the wake-up of a sleeping event loop by its answer (about 50–70 µs measured at one
 * connection); a worker that has lost its core is waited for asleep after this.
 */
export const FINISH_SPIN_MS = 0.1;

export class QueryWorkers {
  /**
   * Queries over fewer shards run on the request thread. Tests lower it to 1, so that the query
   * tests' one-shard queries run through the workers too (test/helpers/server.ts).
   */
  minShards = MIN_WORKER_SHARDS;
  /**
   * Count and bitmap queries reading fewer bits of rows than this run on the request thread
   * (work-estimate.ts); 0: any. Tests set 0, with minShards 1.
   */
  minWorkBits = MIN_WORKER_BITS;
  /**
   * Whether the request thread computes a share of a query when the workers are idle
   * (here-share.ts). Tests turn it off to send every share to the workers.
   */
  shareHere = true;
  /**
   * Whether a read the workers could share runs shared or on the request thread alone, whichever
   * was faster lately (here-share.ts); off: always shared (tests of the shared phase).
   */
  adaptShare = true;
  readonly shareGain = new ShareGain();
  /** The slices the request thread computes its share in (tests: 0, a yield at every shard). */
  hereSliceMs = 1;
  /**
   * How long the request thread spins for a started worker's last chunk once its own share is
   * done, before it waits in its event loop (here-share.ts: ShardClaims.spinUntilDone).
   */
  finishSpinMs = FINISH_SPIN_MS;
  /**
   * When set (benches), each read shared with the request thread adds its timeline here
   * (timeline.ts); unset, nothing is marked.
   */
  timelines: QueryTimeline[] | undefined;
  private nextId = 1;
  readonly stats: QueryWorkerStats = { jobs: 0, failed: 0, cancelled: 0, sharedHere: 0, stateMoved: 0 };
  private broken: Error | undefined;

  private constructor(
    private readonly workers: QueryWorker[],
    private readonly publisher: StatePublisher,
  ) {}

  /**
   * Starts `n` workers on the whole state; call while the applied state is durable (at startup).
   * Returns at once: until the threads are up (seconds under load: each loads the executor),
   * queries run on the request thread, and publications wait in the engine.
   */
  static start(n: number, publisher: StatePublisher, logger: Logger): QueryWorkers {
    const url = siblingModule('worker', import.meta.url);
    let pool: QueryWorkers | undefined;
    const onExit = (w: QueryWorker, err: Error): void => pool?.fail(w, err, logger);
    const workers = Array.from({ length: n }, () => new QueryWorker(url, onExit));
    pool = new QueryWorkers(workers, publisher);
    const whole = publisher.enable();
    const started = pool;
    started.ready = Promise.all(workers.map((w) => w.ready)).then(
      () => {
        for (const w of workers) w.send({ kind: 'publish', pubs: [whole] });
        started.up = true;
        started.publish();
      },
      (err: unknown) => started.fail(workers[0], err instanceof Error ? err : new Error(String(err)), logger),
    );
    return pool;
  }

  /** Resolves once every worker holds the state (or the pool failed: see usable). */
  whenReady(): Promise<void> {
    return this.ready;
  }

  private ready: Promise<void> = Promise.resolve();
  private up = false;

  get size(): number {
    return this.workers.length;
  }

  /** Per worker: jobs not answered yet, and its busy time so far. */
  load(): QueryWorkerLoad[] {
    return this.workers.map((w) => ({ queued: w.pending.size, busySeconds: w.busyMs / 1000 }));
  }

  /** Whether jobs can run: the workers are up, and none died (then queries run in-thread). */
  get usable(): boolean {
    return this.up && this.broken === undefined;
  }

  /**
   * Whether the request thread may compute a share of a query itself (here-share.ts): no job
   * waits or runs (a core is free for it), and once the durable publications are handed out the
   * workers hold exactly the request thread's state (no write applied and not yet durable), so
   * every share reads one state.
   */
  canShareHere(): boolean {
    if (!this.shareHere || !this.usable || this.workers.length < 2) return false;
    for (const w of this.workers) if (w.pending.size > 0) return false;
    this.publish();
    return this.publisher.handedOut;
  }

  /**
   * Runs one phase of a query: job i over shares[i], on worker i. Publications durable by now go
   * first. `signal` (the client gone) cancels the jobs still running.
   */
  run(base: Omit<Job, 'id' | 'shards'>, shares: number[][], signal?: AbortSignal): Promise<JobAnswer[]> {
    try {
      return this.send(
        base,
        shares.map((shards) => ({ shards })),
        signal,
      ).answers();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * One phase shared with the request thread (here-share.ts): a job on each of the first
   * `claims.jobs` workers over all `shards`, which they claim chunk by chunk with it.
   */
  share(
    base: Omit<Job, 'id' | 'shards'>,
    shards: readonly number[],
    claims: ShardClaims,
    signal?: AbortSignal,
    timeline?: QueryTimeline,
  ): SentJobs {
    const slot = (i: number): Job['claims'] =>
      timeline === undefined ? claims.slotOf(i) : { ...claims.slotOf(i), marks: newMarks() };
    return this.send(
      base,
      Array.from({ length: claims.jobs }, (_, i) => ({ shards, claims: slot(i) })),
      signal,
    );
  }

  /** Job i (its shards, its claim slot) to worker i, after the publications durable by now. */
  private send(
    base: Omit<Job, 'id' | 'shards'>,
    jobs: Pick<Job, 'shards' | 'claims'>[],
    signal?: AbortSignal,
  ): SentJobs {
    if (this.broken !== undefined) throw this.broken;
    this.publish();
    this.stats.jobs += jobs.length;
    const sent = jobs.map((own, i) => {
      const id = this.nextId;
      this.nextId = this.nextId >= 0x7fffffff ? 1 : this.nextId + 1;
      const w = this.workers[i % this.workers.length];
      const answer = new Promise<JobAnswer>((resolve, reject) => {
        w.pending.set(id, { resolve, reject });
        w.send({ kind: 'job', job: { ...base, id, ...own } });
      });
      // Awaited by answers(), unless the phase ends before (SentJobs.abandon).
      answer.catch(() => undefined);
      return { id, worker: w, answer };
    });
    return new SentJobs(sent, this.stats, signal);
  }
  /** Hands the workers every publication durable by now (kept in the engine until they are up). */
  publish(): void {
    if (!this.up && this.broken === undefined) return;
    const pubs = this.publisher.durable();
    // A failed pool drops them: nobody will read them, and kept they would pin old rows' bytes.
    if (pubs.length > 0 && this.broken === undefined) for (const w of this.workers) w.send({ kind: 'publish', pubs });
  }

  private fail(w: QueryWorker, err: Error, logger: Logger): void {
    if (this.broken === undefined && this.closing === undefined) {
      this.broken = err;
      logger.error({ err: err.message }, 'a query worker failed: queries run on the request thread from now on');
    }
    for (const p of w.pending.values()) p.reject(err);
    w.pending.clear();
  }

  private closing: Promise<void> | undefined;

  async close(): Promise<void> {
    this.closing ??= Promise.all(this.workers.map((w) => w.terminate())).then(() => undefined);
    await this.closing;
  }
}

/**
 * The jobs of one query phase, sent: their answers, awaited together; one failure cancels the
 * others, and so does the client going away (`signal`) from the moment they are sent.
 */
export class SentJobs {
  private readonly gone = (): void => {
    this.stats.cancelled += this.jobs.length;
    this.cancel();
  };

  constructor(
    private readonly jobs: readonly { id: number; worker: QueryWorker; answer: Promise<JobAnswer> }[],
    private readonly stats: QueryWorkerStats,
    private readonly signal: AbortSignal | undefined,
  ) {
    // A signal fires 'abort' once: a client gone before the jobs were sent (during the first
    // phase, the merge, the compile) would never cancel them.
    if (signal?.aborted === true) this.gone();
    else signal?.addEventListener('abort', this.gone, { once: true });
  }

  /** The answers in order; job i with `skip(i)` is not awaited (it takes no shard: counts as none). */
  async answers(skip?: (i: number) => boolean): Promise<JobAnswer[]> {
    try {
      return await Promise.all(
        this.jobs.map(({ id, worker, answer }, i): JobAnswer | Promise<JobAnswer> => {
          if (skip?.(i) !== true) return answer.catch((err: unknown) => this.failed(err));
          // No work left for it: not queued any more (its worker drops it, answering none).
          worker.pending.delete(id);
          return { kind: 'done', id, none: true };
        }),
      );
    } catch (err) {
      // One share failed (an error, a deadline): the others need not finish.
      this.cancel();
      throw err;
    } finally {
      this.signal?.removeEventListener('abort', this.gone);
    }
  }

  /** Job i's answer taken now if its worker posted it (it then settles without a turn of the event loop). */
  receive(i: number): void {
    this.jobs[i].worker.receive();
  }

  /** The phase ended without these answers (the request thread's share failed): they need not finish. */
  abandon(): void {
    this.cancel();
    this.signal?.removeEventListener('abort', this.gone);
  }

  private cancel(): void {
    for (const { id, worker } of this.jobs) Atomics.store(worker.cancels, id % CANCEL_SLOTS, id);
  }

  private failed(err: unknown): never {
    this.stats.failed++;
    throw err;
  }
}
