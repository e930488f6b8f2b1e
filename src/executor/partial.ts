// Partial results: one read call computed over a subset of the shards (cluster mode: the shards
// of the log partitions one node holds), in a form that merge.ts combines exactly as one node
// combines shards. Two calls need a first phase over all shards before their partials mean
// anything: TopN (the union of every shard's candidates, then every candidate counted in every
// shard) and GroupBy children with limit/column (their rows over all shards). The wire forms
// are plain JSON: 64-bit columns and BSI values travel as decimal strings.
import type { ValCount } from '../state/bsi.js';
import { type BestRow, minMaxBest, valCountAcc } from './aggregate.js';
import { planRowColumns } from './bitmap-eval.js';
import type { ReadContext } from './context.js';
import { type AllowedRows, type Group, firstGroups, groupByAllowed, groupByGroups } from './group-by.js';
import type { BitmapPlan, ReadPlan } from './plan.js';
import type { RowColumns } from './result.js';
import { rowIds } from './rows.js';
import { type Work, countWork } from './run.js';
import { type TopNCounts, topNCandidateFilter, topNCandidates, topNCounts } from './topn.js';

/** Phase one's answer for one call (of the innermost plan under Options()). */
export type CallPrep =
  | { kind: 'none' }
  /** TopN without ids: candidate rows (one node's, or after a merge all of them, attr-filtered). */
  | { kind: 'topN'; candidates: number[] }
  /** GroupBy: the rows of its children with limit/column. */
  | { kind: 'groupBy'; allowed: AllowedRows };

export type CallPartial =
  /** A large one as each shard's offsets (ShardColumns), as a one-node row answer keeps them. */
  | { kind: 'columns'; columns: RowColumns }
  | { kind: 'count'; n: number }
  | { kind: 'valCount'; acc: ValCount | undefined }
  | { kind: 'best'; best: BestRow | undefined }
  | { kind: 'topN'; counts: TopNCounts }
  | { kind: 'rows'; ids: number[] }
  /** Ascending; cut at offset+limit when GroupBy has a limit. */
  | { kind: 'groups'; groups: Group[] };

const NO_PREP: CallPrep = { kind: 'none' };

/** The plan under any Options() wrappers and the context it runs in. */
export function innermost(
  ctx: ReadContext,
  plan: ReadPlan,
): { ctx: ReadContext; plan: Exclude<ReadPlan, { kind: 'options' }> } {
  let c = ctx;
  let p = plan;
  while (p.kind === 'options') {
    c = c.withSettings(p.settings);
    p = p.child;
  }
  return { ctx: c, plan: p };
}

/** The plan under any Options() wrappers. */
export function innermostPlan(plan: ReadPlan): Exclude<ReadPlan, { kind: 'options' }> {
  let p = plan;
  while (p.kind === 'options') p = p.child;
  return p;
}

/** Whether the call has a phase one (see CallPrep). */
export function needsPrep(plan: ReadPlan): boolean {
  let p = plan;
  while (p.kind === 'options') p = p.child;
  if (p.kind === 'topN') return p.ids === undefined;
  if (p.kind === 'groupBy') return p.children.some((c) => c.limit !== undefined || c.column !== undefined);
  return false;
}

/** Phase one of one call over the context's shards. */
export function* callPrep(ctx0: ReadContext, plan0: ReadPlan): Work<CallPrep> {
  if (!needsPrep(plan0)) return NO_PREP;
  const { ctx, plan } = innermost(ctx0, plan0);
  if (plan.kind === 'topN') return { kind: 'topN', candidates: topNCandidates(ctx, plan) };
  if (plan.kind === 'groupBy') return { kind: 'groupBy', allowed: yield* groupByAllowed(ctx, plan) };
  return NO_PREP;
}

/** One call over the context's shards, given phase one merged over all shards (needsPrep). */
export function* callPartial(ctx0: ReadContext, plan0: ReadPlan, prep: CallPrep): Work<CallPartial> {
  const { ctx, plan } = innermost(ctx0, plan0);
  switch (plan.kind) {
    case 'bitmap':
      return { kind: 'columns', columns: ctx.opts.excludeColumns ? [] : yield* planRowColumns(ctx, plan.plan) };
    case 'count':
      return { kind: 'count', n: yield* countWork(ctx, plan.child) };
    case 'valCount':
      return { kind: 'valCount', acc: yield* valCountAcc(ctx, plan) };
    case 'minMaxRow':
      return { kind: 'best', best: yield* minMaxBest(ctx, plan) };
    case 'topN': {
      let candidates: number[];
      if (plan.ids !== undefined) candidates = topNCandidateFilter(plan, plan.ids);
      else if (prep.kind === 'topN') candidates = prep.candidates;
      else throw new Error('TopN partial without its candidates');
      return { kind: 'topN', counts: yield* topNCounts(ctx, plan, candidates) };
    }
    case 'rows':
      return { kind: 'rows', ids: yield* rowIds(ctx, plan.spec) };
    case 'groupBy': {
      const allowed = prep.kind === 'groupBy' ? prep.allowed : plan.children.map(() => undefined);
      if (needsPrep(plan) && prep.kind !== 'groupBy') throw new Error('GroupBy partial without its children rows');
      return { kind: 'groups', groups: firstGroups(plan, yield* groupByGroups(ctx, plan, allowed)) };
    }
  }
}

/** Phase one of every call, yielding between calls. */
export function* prepsWork(ctx: ReadContext, plans: readonly ReadPlan[]): Work<CallPrep[]> {
  const out: CallPrep[] = [];
  for (let i = 0; i < plans.length; i++) {
    if (i > 0) yield;
    out.push(yield* callPrep(ctx, plans[i]));
  }
  return out;
}

/** Every call's partial, yielding between calls. */
export function* partialsWork(
  ctx: ReadContext,
  plans: readonly ReadPlan[],
  preps: readonly CallPrep[],
): Work<CallPartial[]> {
  const out: CallPartial[] = [];
  for (let i = 0; i < plans.length; i++) {
    if (i > 0) yield;
    out.push(yield* callPartial(ctx, plans[i], preps[i] ?? NO_PREP));
  }
  return out;
}

/**
 * Whether a plan moves columns across shards (Shift): its partials over a subset of the shards
 * would need columns of shards outside it, so only a node holding every shard can answer it.
 */
export function readMovesColumns(plan: ReadPlan): boolean {
  switch (plan.kind) {
    case 'bitmap':
      return moves(plan.plan);
    case 'count':
      return moves(plan.child);
    case 'valCount':
    case 'minMaxRow':
    case 'groupBy':
      return plan.filter !== undefined && moves(plan.filter);
    case 'topN':
      return plan.src !== undefined && moves(plan.src);
    case 'rows':
      return false;
    case 'options':
      return readMovesColumns(plan.child);
  }
}

function moves(p: BitmapPlan): boolean {
  switch (p.kind) {
    case 'shift':
      return true;
    case 'union':
    case 'intersect':
    case 'difference':
    case 'xor':
      return p.children.some(moves);
    case 'not':
      return moves(p.child);
    default:
      return false;
  }
}
