// A read-only query once validated and compiled, and the two ways to run it: straight through,
// or as a generator that yields between calls and (inside each call) between shards.
import type { Call } from '../pql/ast.js';
import type { QueryClock } from './clock.js';
import type { CompileEnv } from './compile-bitmap.js';
import { compileRead } from './compile-read.js';
import { type ReadContext, queryContext } from './context.js';
import { checkKeys } from './key-check.js';
import type { BitmapPlan, ReadPlan } from './plan.js';
import { respond } from './respond.js';
import type { QueryOptions, QueryResponse } from './result.js';
import { type CallOutput, type Work, countSync, drainSync, executeRead, executeReadSync } from './run.js';
import { AnswerBytes, bitmapPlansOf, checkBitmapMemory, precountAnswer, resultBytes } from './answer-size.js';
import type { ReadonlyIndex } from '../state/readonly.js';

export interface Reads {
  index: ReadonlyIndex;
  plans: ReadPlan[];
  /** Read-only: every call sees the same state, so one context serves them all. */
  ctx: ReadContext;
  columnAttrs: boolean;
  /** The answer's byte budget, counted before the answer is built (answer-size.ts). */
  answer: AnswerBytes;
}

/** Checks the keys of (key-check.ts) and compiles (= validates) every call before any runs. */
export function compileReads(
  index: ReadonlyIndex,
  calls: readonly Call[],
  opts: QueryOptions,
  clock: QueryClock,
): Reads {
  const env: CompileEnv = { index, clock, keysChecked: true };
  const plans = new Array<ReadPlan>(calls.length);
  try {
    for (let i = 0; i < calls.length; i++) plans[i] = compileRead(env, calls[i]);
  } catch (e) {
    // A key error anywhere in the query wins over any compile error, as in Pilosa.
    checkKeys(index, calls);
    throw e;
  }
  if (!env.keysChecked) checkKeys(index, calls);
  for (const p of plans) for (const b of bitmapPlansOf(p)) checkBitmapMemory(b, opts.maxQueryMemory ?? 0);
  const answer = new AnswerBytes(opts.maxResultBytes ?? 0);
  return { index, plans, ctx: queryContext(index, opts), columnAttrs: opts.columnAttrs, answer };
}

export function runReadsSync(r: Reads): QueryResponse {
  // One call without columnAttrs (most queries): its result is the whole response.
  if (r.plans.length === 1 && !r.columnAttrs) {
    const plan = r.plans[0];
    if (plan.kind === 'count') return { results: [{ type: 'count', n: countSync(r.ctx, plan.child) }] };
    drainSync(precountAnswer(r.ctx, r.plans, r.answer));
    const out = executeReadSync(r.ctx, plan);
    r.answer.add(resultBytes(out.result), plan.kind);
    if (out.columnAttrs !== true) return { results: [out.result] };
    return respond(r.index, [out], r.columnAttrs);
  }
  drainSync(precountAnswer(r.ctx, r.plans, r.answer));
  const outputs = new Array<CallOutput>(r.plans.length);
  for (let i = 0; i < outputs.length; i++) {
    outputs[i] = executeReadSync(r.ctx, r.plans[i]);
    r.answer.add(resultBytes(outputs[i].result), r.plans[i].kind);
  }
  return respond(r.index, outputs, r.columnAttrs);
}

export function* readsWork(r: Reads): Work<QueryResponse> {
  yield* precountAnswer(r.ctx, r.plans, r.answer);
  const outputs: CallOutput[] = [];
  for (let i = 0; i < r.plans.length; i++) {
    if (i > 0) yield;
    const out = yield* executeRead(r.ctx, r.plans[i]);
    r.answer.add(resultBytes(out.result), r.plans[i].kind);
    outputs.push(out);
  }
  return respond(r.index, outputs, r.columnAttrs);
}

/**
 * Work yields only at shard boundaries: one Count or bitmap call over one shard has none (a
 * Shift, at most one), so slicing it would only add the generators' cost. A Count of a few plain
 * rows over a few shards is bounded too (smallCount), and runs straight through unless the
 * caller asked for slices shorter than 1 ms.
 */
export function unsliced(r: Reads, sliceMs: number): boolean {
  if (r.plans.length !== 1) return false;
  const plan = r.plans[0];
  if (r.ctx.shards.length === 1) return plan.kind === 'count' || plan.kind === 'bitmap';
  return plan.kind === 'count' && !r.columnAttrs && sliceMs >= 1 && smallCount(plan.child, r.ctx.shards.length);
}

/**
 * Row reads (one row in one shard) a Count may make unsliced: a row of a shard is at most 16
 * bitmap containers (128 KiB), which a count streams in about 3–5 µs here, so 64 of them end well
 * within one 1 ms slice. Counted at 16 shards of Count(Intersect(Row, Row)), slicing (three
 * nested generators, clock readings, a promise chain) cost about 5 µs and 2.6 KB of garbage a
 * query (issue 24, http bench).
 */
const SMALL_COUNT_ROW_READS = 64;

/** Whether a Count of `p` over `shards` shards reads plain rows only, at most SMALL_COUNT_ROW_READS of them. */
function smallCount(p: BitmapPlan, shards: number): boolean {
  const rows = plainRows(p);
  return rows >= 0 && rows * shards <= SMALL_COUNT_ROW_READS;
}

/** Rows a plan reads in a shard when it combines standard-view-like rows only; −1 otherwise. */
function plainRows(p: BitmapPlan): number {
  switch (p.kind) {
    case 'row':
      return 1;
    case 'empty':
      return 0;
    case 'union':
    case 'intersect':
    case 'difference':
    case 'xor': {
      let n = 0;
      for (const c of p.children) {
        const k = plainRows(c);
        if (k < 0) return -1;
        n += k;
      }
      return n;
    }
    default:
      return -1;
  }
}
