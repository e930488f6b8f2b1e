// The request thread's side of the query workers: N worker threads (worker.ts), each fed every
// publication of the engine's state (engine/frozen-feed.ts) before any job sent after it, so a
// job always runs on a state at least as new as the last acknowledged write, and never on one
// that is not durable. Jobs go to every worker with a share of the shards; the answers are
// merged here. A client that goes away cancels its jobs through a shared board the workers
// read between shards.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { DomainError } from '../../domain/errors.js';
import type { StatePublisher } from '../../engine/ports.js';
import { HereSplit } from './here-share.js';
import { CANCEL_SLOTS, type FromWorker, type Job, type ToWorker } from './protocol.js';

/** tsx's ESM API (the .mjs beside the .cjs that require resolves). */
const TSX_API = pathToFileURL(
  createRequire(import.meta.url)
    .resolve('tsx/esm/api')
    .replace(/\.cjs$/, '.mjs'),
).href;

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

  constructor(url: URL, onExit: (w: QueryWorker, err: Error) => void) {
    const workerData = { cancels: this.cancels.buffer };
    // A build runs its .js; sources (tests, `--import tsx`) load through tsx's loader, which a
    // worker does not inherit.
    this.thread = url.pathname.endsWith('.ts')
      ? new Worker(
          `import(${JSON.stringify(TSX_API)}).then((tsx) => (tsx.register(), import(${JSON.stringify(url.href)})));`,
          { eval: true, workerData },
        )
      : new Worker(url, { workerData });
    this.ready = new Promise<void>((resolve, reject) => {
      this.thread.once('error', reject);
      this.thread.once('message', () => resolve());
    });
    this.thread.on('message', (m: FromWorker) => this.answer(m));
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
  /** The request thread's part of a query it shares (here-share.ts); tests start it afresh. */
  split: HereSplit;
  /** The slices the request thread computes its share in (tests: 0, a yield at every shard). */
  hereSliceMs = 1;
  private nextId = 1;
  readonly stats: QueryWorkerStats = { jobs: 0, failed: 0, cancelled: 0, sharedHere: 0, stateMoved: 0 };
  private broken: Error | undefined;

  private constructor(
    private readonly workers: QueryWorker[],
    private readonly publisher: StatePublisher,
  ) {
    this.split = new HereSplit(workers.length);
  }

  /**
   * Starts `n` workers on the whole state; call while the applied state is durable (at startup).
   * Returns at once: until the threads are up (seconds under load: each loads the executor),
   * queries run on the request thread, and publications wait in the engine.
   */
  static start(n: number, publisher: StatePublisher, logger: Logger): QueryWorkers {
    const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
    const url = new URL(`./worker.${ext}`, import.meta.url);
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
  async run(base: Omit<Job, 'id' | 'shards'>, shares: number[][], signal?: AbortSignal): Promise<JobAnswer[]> {
    if (this.broken !== undefined) throw this.broken;
    this.publish();
    this.stats.jobs += shares.length;
    const ids: number[] = [];
    const answers = shares.map((shards, i) => {
      const id = this.nextId;
      this.nextId = this.nextId >= 0x7fffffff ? 1 : this.nextId + 1;
      ids.push(id);
      const w = this.workers[i % this.workers.length];
      return new Promise<JobAnswer>((resolve, reject) => {
        w.pending.set(id, { resolve, reject });
        w.send({ kind: 'job', job: { ...base, id, shards } });
      });
    });
    const cancel = (): void =>
      ids.forEach((id, i) => Atomics.store(this.workers[i % this.workers.length].cancels, id % CANCEL_SLOTS, id));
    const gone = (): void => {
      this.stats.cancelled += ids.length;
      cancel();
    };
    // A signal fires 'abort' once: a client gone before the jobs were sent (during the first
    // phase, the merge, the compile) would never cancel them.
    if (signal?.aborted === true) gone();
    else signal?.addEventListener('abort', gone, { once: true });
    try {
      return await Promise.all(answers.map((a) => a.catch((err: unknown) => this.failed(err))));
    } catch (err) {
      // One share failed (an error, a deadline): the others need not finish.
      cancel();
      throw err;
    } finally {
      signal?.removeEventListener('abort', gone);
    }
  }

  private failed(err: unknown): never {
    this.stats.failed++;
    throw err;
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
    this.closing ??= Promise.all(this.workers.map((w) => w.thread.terminate())).then(() => undefined);
    await this.closing;
  }
}
