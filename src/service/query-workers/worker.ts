// A query worker thread: applies the engine's publications to its StateMirror and runs the
// phases of queries (executor/partial.ts) over the shards it is sent, checking between shards
// whether the request thread cancelled the job (client gone) and whether its deadline passed.
import { parentPort, workerData } from 'node:worker_threads';
import { DomainError, badRequest } from '../../domain/errors.js';
import { QueryClock, type QueryBudget, checkBudget } from '../../executor/index.js';
import { systemClock } from '../../util/clock.js';
import { ReadContext } from '../../executor/context.js';
import { partialsWork, prepsWork } from '../../executor/partial.js';
import { compileReads } from '../../executor/reads.js';
import type { Work } from '../../executor/run.js';
import { CANCEL_SLOTS, type FromWorker, type Job, type ToWorker } from './protocol.js';
import { StateMirror } from './mirror.js';

const port = parentPort;
if (port === null) throw new Error('query worker started outside a worker thread');
const cancels = new Int32Array((workerData as { cancels: SharedArrayBuffer }).cancels);
const mirror = new StateMirror();

port.on('message', (m: ToWorker) => {
  if (m.kind === 'publish') {
    for (const p of m.pubs) mirror.apply(p);
    return;
  }
  port.postMessage(runJob(m.job));
});
port.postMessage({ kind: 'ready' } satisfies FromWorker);

function runJob(job: Job): FromWorker {
  try {
    const index = mirror.index(job.index);
    // Created by a write not yet durable: the durable state has no such index, hence no bits.
    if (index === undefined) throw badRequest('executing: index not found');
    const { plans } = compileReads(index, job.calls, job.opts, new QueryClock(job.now));
    const mine = new Set(job.shards);
    const ctx = new ReadContext(index, job.shards, job.opts, true, (s) => mine.has(s));
    if (job.phase === 'prep') return { kind: 'done', id: job.id, preps: drain(prepsWork(ctx, plans), job) };
    return { kind: 'done', id: job.id, partials: drain(partialsWork(ctx, plans, job.preps ?? []), job) };
  } catch (err) {
    if (err instanceof DomainError) return { kind: 'failed', id: job.id, code: err.code, message: err.message };
    return { kind: 'failed', id: job.id, message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
}

/** Runs work through, checking the cancel board and the deadline at every shard boundary. */
function drain<T>(work: Work<T>, job: Job): T {
  // The deadline as the request thread measured it, carried over as the time left of it.
  const budget: QueryBudget | undefined =
    job.remainingMs === undefined
      ? undefined
      : { deadline: systemClock.monotonic() + job.remainingMs, timeoutMs: job.timeoutMs, clock: systemClock };
  const slot = job.id % CANCEL_SLOTS;
  for (;;) {
    const r = work.next();
    if (r.done === true) return r.value;
    // An atomic load and a clock reading: well under a shard's work (a few µs at least).
    if (Atomics.load(cancels, slot) === job.id)
      throw badRequest('executing: query cancelled: the client closed the connection');
    checkBudget(budget);
  }
}
