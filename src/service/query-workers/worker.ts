// A query worker thread: applies the engine's publications to its StateMirror and runs the
// phases of queries (executor/partial.ts) over the shards it is sent, checking between shards
// whether the request thread cancelled the job (client gone) and whether its deadline passed.
//
// Jobs run in slices, taking turns: a long GroupBy's share does not hold a small query sent
// after it (on the request thread alone a query is sliced too: executor/query-async.ts). A
// publication changes the mirror, so it waits until no job is running, and a job sent after it
// waits for it: every job reads one state from its first shard to its last, and never one older
// than the writes acknowledged before it was sent.
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { DomainError, badRequest } from '../../domain/errors.js';
import { type QueryBudget, checkBudget } from '../../executor/index.js';
import { crossThreadMs, systemClock } from '../../util/clock.js';
import type { Work } from '../../executor/run.js';
import { claimsDone, startClaiming } from './here-share.js';
import { jobWork } from './job.js';
import { CANCEL_SLOTS, type FromWorker, type Job, type JobReply, type ToWorker } from './protocol.js';
import { StateMirror } from './mirror.js';

const port = parentPort;
if (port === null) throw new Error('query worker started outside a worker thread');
const data = workerData as { cancels: SharedArrayBuffer; answers: MessagePort };
const cancels = new Int32Array(data.cancels);
/** Answers go on a port of their own (pool.ts: the request thread may take them synchronously). */
const answers = data.answers;
const mirror = new StateMirror();

/** A slice of one job's work before the next job takes its turn (as the request thread's 1 ms). */
const SLICE_MS = 1;

interface Running {
  job: Job;
  work: Work<JobReply>;
  budget: QueryBudget | undefined;
  /** Busy ms so far (the answer carries it: the pool's busy figure). */
  busyMs: number;
}

/** Jobs started, taking turns. */
const running: Running[] = [];
/** Messages not handled yet, in order: a publication while jobs run, and any job after it. */
const inbox: ToWorker[] = [];
let scheduled = false;

port.on('message', (m: ToWorker) => {
  if (m.kind === 'job' && m.job.claims?.marks !== undefined) m.job.claims.marks.received = crossThreadMs();
  inbox.push(m);
  pump();
});
port.postMessage({ kind: 'ready' } satisfies FromWorker);

/** Handles the inbox in order as far as it can: a publication only once no job runs. */
function pump(): void {
  while (inbox.length > 0) {
    const m = inbox[0];
    if (m.kind === 'publish') {
      if (running.length > 0) break;
      for (const p of m.pubs) mirror.apply(p);
    } else start(m.job);
    inbox.shift();
  }
  if (running.length > 0 && !scheduled) {
    scheduled = true;
    setImmediate(turn);
  }
}

function start(job: Job): void {
  // A shared phase's job closed by the request thread before it started here: the request thread
  // did not wait for it, and took every shard (here-share.ts).
  if (job.claims !== undefined && !startClaiming(job.claims)) {
    const { marks } = job.claims;
    answers.postMessage({ kind: 'done', id: job.id, none: true, ...(marks && { marks }) } satisfies FromWorker);
    return;
  }
  try {
    running.push({ job, work: jobWork(mirror, job), budget: budgetOf(job), busyMs: 0 });
  } catch (err) {
    reply(job, failure(job, err));
  }
}

/** One slice of the job whose turn it is; messages that came meanwhile are handled next. */
function turn(): void {
  scheduled = false;
  const r = running.shift();
  if (r !== undefined) {
    const marks = r.job.claims?.marks;
    if (marks !== undefined) marks.started ??= crossThreadMs();
    const t0 = systemClock.monotonic();
    const answer = slice(r, t0);
    r.busyMs += systemClock.monotonic() - t0;
    if (answer === undefined) running.push(r);
    else reply(r.job, { ...answer, busyMs: r.busyMs });
  }
  pump();
}

/** Runs `r` for one slice: its answer when it ends (done or failed), else undefined. */
function slice(r: Running, t0: number): JobReply | undefined {
  const slot = r.job.id % CANCEL_SLOTS;
  try {
    for (;;) {
      const step = r.work.next();
      if (step.done === true) return step.value;
      // An atomic load and a clock reading: well under a shard's work (a few µs at least).
      if (Atomics.load(cancels, slot) === r.job.id)
        throw badRequest('executing: query cancelled: the client closed the connection');
      checkBudget(r.budget);
      if (systemClock.monotonic() - t0 >= SLICE_MS) return undefined;
    }
  } catch (err) {
    return failure(r.job, err);
  }
}

/** Posts the job's answer; a shared phase's job then says so on its board (the request thread may be waiting). */
function reply(job: Job, m: JobReply): void {
  const marks = job.claims?.marks;
  if (marks !== undefined) marks.posted = crossThreadMs();
  answers.postMessage(marks === undefined || m.kind !== 'done' ? m : { ...m, marks });
  if (job.claims !== undefined) claimsDone(job.claims);
}

/** The deadline as the request thread measured it, carried over as the time left of it. */
function budgetOf(job: Job): QueryBudget | undefined {
  return job.remainingMs === undefined
    ? undefined
    : { deadline: systemClock.monotonic() + job.remainingMs, timeoutMs: job.timeoutMs, clock: systemClock };
}

function failure(job: Job, err: unknown): JobReply {
  if (err instanceof DomainError) return { kind: 'failed', id: job.id, code: err.code, message: err.message };
  return { kind: 'failed', id: job.id, message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
}
