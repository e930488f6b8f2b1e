// TopN(field[, src][, n][, ids][, threshold][, tanimotoThreshold][, attrName, attrValues]).
// Candidates are the rows of each shard's cache (or `ids`); the answer is exactly what counting
// every candidate in every shard (∩ src) gives, not Pilosa's per-shard top-n estimates, but only
// the candidates that can still enter the top n are counted (topn-select.ts: a threshold
// algorithm over the shards' rows ranked by size). Pilosa semantics kept: `threshold` (default
// 1) applies per shard; with `ids` all of them are returned (n ignored). Tanimoto is computed on
// whole-index counts. Ties: ascending row ID.
import { STANDARD_VIEW } from '../domain/names.js';
import type { AttrValue } from '../domain/types.js';
import type { Value } from '../pql/ast.js';
import { checkResultRows } from './budget.js';
import type { PairResult, QueryResult } from './result.js';
import { type RO, bitmapAt, outShards } from './bitmap-eval.js';
import { cachedUnion, rankingOf } from './cache.js';
import type { ReadContext } from './context.js';
import type { TopNPlan } from './plan.js';
import { isKeyedField, rowKeyOf } from './refs.js';
import {
  type ExactCount,
  type TopNCounts,
  type TopNQuery,
  type TopNShard,
  countCandidates,
  selectTopN,
  tanimotoPasses,
} from './topn-select.js';
import type { ReadonlyFragment, ReadonlyIndex } from '../state/readonly.js';
import { type TotalsInput, topFromTotals } from './topn-totals.js';

export type { TopNCounts } from './topn-select.js';

type Work<T> = Generator<void, T, undefined>;

export function* topN(ctx: ReadContext, p: TopNPlan): Work<QueryResult> {
  const inputs = topNInputs(ctx, p);
  let counted: TopNCounts | undefined;
  if (p.ids !== undefined)
    counted = yield* countCandidates(inputs.shards, inputs.query, topNCandidateFilter(p, p.ids), inputs.exact);
  else {
    const isCandidate = candidateTest(ctx, p);
    // Unfiltered: a row's count is its total over the shards, kept while they do not change.
    if (inputs.exact === undefined) counted = topFromTotals(totalsInput(p, inputs), p.n, isCandidate);
    counted ??= yield* selectTopN(inputs.shards, inputs.query, isCandidate, inputs.exact);
  }
  return topNResult(ctx.index, p, counted, ctx.opts.maxResultRows);
}

function totalsInput(p: TopNPlan, inputs: TopNInputs): TotalsInput {
  return {
    owner: p.field,
    key: `${p.view ?? STANDARD_VIEW}|${p.threshold}|${inputs.shardIds.join(',')}`,
    fragments: inputs.fragments,
    rankings: inputs.shards.map((s) => s.ranking),
    threshold: p.threshold,
  };
}

/** The per-shard inputs of topn-select.ts for the context's shards. */
interface TopNInputs {
  shards: TopNShard[];
  /** The shards' IDs and fragments, in the order of `shards`. */
  shardIds: number[];
  fragments: ReadonlyFragment[];
  query: TopNQuery;
  exact: ExactCount;
}

function topNInputs(ctx: ReadContext, p: TopNPlan): TopNInputs {
  const tanimoto = p.src !== undefined ? p.tanimoto : 0;
  let srcCount = 0;
  if (tanimoto > 0 && p.src !== undefined)
    for (const s of outShards(ctx, p.src)) srcCount += bitmapAt(ctx, p.src, s).size;
  const shards: TopNShard[] = [];
  const frags: ReadonlyFragment[] = [];
  const shardIds: number[] = [];
  const srcs: RO[] = [];
  for (const s of ctx.shards) {
    const frag = ctx.fragment(p.field, p.view ?? STANDARD_VIEW, s);
    if (frag === undefined) continue;
    const src = p.src === undefined ? undefined : bitmapAt(ctx, p.src, s);
    shards.push({ ranking: rankingOf(frag), cap: src === undefined ? Number.POSITIVE_INFINITY : src.size });
    frags.push(frag);
    shardIds.push(s);
    if (src !== undefined) srcs.push(src);
  }
  const exact: ExactCount = p.src === undefined ? undefined : (i, row) => frags[i].countWith(row, srcs[i]);
  return { shards, shardIds, fragments: frags, query: { n: p.n, threshold: p.threshold, tanimoto, srcCount }, exact };
}

/** Which rows are candidates: the shards' caches' (attr-filtered), or every row of a 0.x inverse view. */
function candidateTest(ctx: ReadContext, p: TopNPlan): (row: number) => boolean {
  if (p.view !== undefined) {
    if (!hasAttrFilter(p)) return () => true;
    return (row) => attrMatches(p.field.rowAttrs.get(row)?.[p.attrName ?? ''], p.attrValues ?? []);
  }
  const union = cachedUnion(p.field, ctx.shards, (s) => ctx.fragment(p.field, STANDARD_VIEW, s));
  if (!hasAttrFilter(p)) return (row) => union.has(row);
  const allowed = new Set(topNCandidateFilter(p, [...union]));
  return (row) => allowed.has(row);
}

/**
 * Phase one: the rows of the shards' caches (or every row of the inverse view), in no order;
 * with `ids` there is no phase one. A cluster unions every node's candidates before phase two.
 */
export function topNCandidates(ctx: ReadContext, p: TopNPlan): number[] {
  const { field } = p;
  if (p.view === undefined) return [...cachedUnion(field, ctx.shards, (s) => ctx.fragment(field, STANDARD_VIEW, s))];
  // The ranked cache is the standard view's: an inverse view's rows are all candidates.
  const set = new Set<number>();
  for (const s of ctx.shards) for (const r of ctx.fragment(field, p.view, s)?.rowKeys() ?? []) set.add(r);
  return [...set];
}

function hasAttrFilter(p: TopNPlan): boolean {
  return p.attrName !== undefined && p.attrValues !== undefined && p.attrValues.length > 0;
}

/** The candidates whose row attribute `attrName` is one of `attrValues` (all without a filter). */
export function topNCandidateFilter(p: TopNPlan, candidates: number[]): number[] {
  if (!hasAttrFilter(p)) return candidates;
  const name = p.attrName ?? '';
  const values = p.attrValues ?? [];
  return candidates.filter((r) => attrMatches(p.field.rowAttrs.get(r)?.[name], values));
}

/**
 * Phase two of a cluster read: every candidate counted exactly in this node's shards (∩ src),
 * the threshold applied per shard; no row views made.
 */
export function* topNCounts(ctx: ReadContext, p: TopNPlan, candidates: readonly number[]): Work<TopNCounts> {
  const inputs = topNInputs(ctx, p);
  return yield* countCandidates(inputs.shards, inputs.query, candidates, inputs.exact);
}

/** The pairs from the counts over all shards: tanimoto, order, n, the result bound, keys. */
export function topNResult(
  index: ReadonlyIndex,
  p: TopNPlan,
  c: TopNCounts,
  maxResultRows: number | undefined,
): QueryResult {
  const { field } = p;
  const tanimoto = p.tanimoto > 0 && p.src !== undefined;
  let pairs: PairResult[] = [];
  for (const [id, count] of c.counts) {
    if (tanimoto && !tanimotoPasses(count, c.sizes.get(id) ?? 0, c.srcCount, p.tanimoto)) continue;
    pairs.push({ id, count });
  }
  pairs.sort((a, b) => b.count - a.count || a.id - b.id);
  if (p.ids === undefined && p.n > 0) pairs = pairs.slice(0, p.n);
  checkResultRows(pairs.length, maxResultRows, 'TopN');
  // Keyed fields: Pilosa's translated pairs carry the key and a zero id.
  if (isKeyedField(field)) pairs = pairs.map((q) => ({ id: 0, key: rowKeyOf(index, field, q.id), count: q.count }));
  return { type: 'pairs', pairs };
}

function attrMatches(a: AttrValue | undefined, values: readonly Value[]): boolean {
  if (a === undefined) return false;
  return values.some(
    (v) =>
      (v.kind === 'int' && typeof a === 'bigint' && a === v.value) ||
      (v.kind === 'float' && typeof a === 'number' && a === v.value) ||
      (v.kind === 'string' && a === v.value) ||
      (v.kind === 'bool' && a === v.value),
  );
}
