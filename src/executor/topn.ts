// TopN(field[, src][, n][, ids][, threshold][, tanimotoThreshold][, attrName, attrValues]).
// Candidates are the rows of each shard's cache (or `ids`); every candidate is then counted in
// every shard (∩ src), so the counts are exact, not Pilosa's per-shard top-n estimates. Pilosa
// semantics kept: `threshold` (default 1) applies per shard; with `ids` all of them are returned
// (n ignored). Tanimoto is computed on whole-index counts. Ties: ascending row ID.
import { STANDARD_VIEW } from '../domain/names.js';
import type { AttrValue } from '../domain/types.js';
import type { Value } from '../pql/ast.js';
import { checkResultRows } from './budget.js';
import type { PairResult, QueryResult } from './result.js';
import { bitmapAt, outShards } from './bitmap-eval.js';
import { cachedRows } from './cache.js';
import type { ReadContext } from './context.js';
import type { TopNPlan } from './plan.js';
import { isKeyedField, rowKeyOf } from './refs.js';
import type { ReadonlyIndex } from '../state/readonly.js';

type Work<T> = Generator<void, T, undefined>;

export function* topN(ctx: ReadContext, p: TopNPlan): Work<QueryResult> {
  const candidates = topNCandidateFilter(p, p.ids ?? topNCandidates(ctx, p));
  const counted = yield* topNCounts(ctx, p, candidates);
  return topNResult(ctx.index, p, counted, ctx.opts.maxResultRows);
}

/** Per-candidate sums over some shards; `srcCount`: |src| there (tanimoto only, else 0). */
export interface TopNCounts {
  counts: Map<number, number>;
  sizes: Map<number, number>;
  srcCount: number;
}

/**
 * Phase one: the rows of the shards' caches (or every row of the inverse view), in no order;
 * with `ids` there is no phase one. A cluster unions every node's candidates before phase two.
 */
export function topNCandidates(ctx: ReadContext, p: TopNPlan): number[] {
  const { field } = p;
  const set = new Set<number>();
  if (p.view !== undefined) {
    // The ranked cache is the standard view's: an inverse view's rows are all candidates.
    for (const s of ctx.shards) for (const r of ctx.fragment(field, p.view, s)?.rows.keys() ?? []) set.add(r);
  } else {
    for (const s of ctx.shards) {
      const frag = ctx.fragment(field, STANDARD_VIEW, s);
      if (frag !== undefined) for (const r of cachedRows(field, s, frag)) set.add(r);
    }
  }
  return [...set];
}

/** The candidates whose row attribute `attrName` is one of `attrValues` (all without a filter). */
export function topNCandidateFilter(p: TopNPlan, candidates: number[]): number[] {
  if (p.attrName === undefined || p.attrValues === undefined || p.attrValues.length === 0) return candidates;
  const name = p.attrName;
  const values = p.attrValues;
  return candidates.filter((r) => attrMatches(p.field.rowAttrs.get(r)?.[name], values));
}

/** Phase two: every candidate counted in every shard (∩ src), the threshold applied per shard. */
export function* topNCounts(ctx: ReadContext, p: TopNPlan, candidates: readonly number[]): Work<TopNCounts> {
  const { field } = p;
  const view = p.view ?? STANDARD_VIEW;
  const tanimoto = p.tanimoto > 0 && p.src !== undefined;
  const counts = new Map<number, number>();
  const sizes = new Map<number, number>();
  let srcCount = 0;
  if (tanimoto && p.src !== undefined) for (const s of outShards(ctx, p.src)) srcCount += bitmapAt(ctx, p.src, s).size;
  for (const s of ctx.shards) {
    const frag = ctx.fragment(field, view, s);
    if (frag !== undefined && candidates.length > 0) {
      const src = p.src === undefined ? undefined : bitmapAt(ctx, p.src, s);
      for (let i = 0; i < candidates.length; i++) {
        // Thousands of candidates × a large source bitmap can take seconds in one shard.
        if (i > 0 && i % CANDIDATES_PER_YIELD === 0) yield;
        const r = candidates[i];
        const row = frag.row(r);
        if (row === undefined) continue;
        const size = row.size;
        const count = src === undefined ? size : row.andCardinality(src);
        if (count === 0 || (!tanimoto && count < p.threshold)) continue;
        counts.set(r, (counts.get(r) ?? 0) + count);
        sizes.set(r, (sizes.get(r) ?? 0) + size);
      }
    }
    yield;
  }
  return { counts, sizes, srcCount };
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
    if (tanimoto && Math.ceil((count * 100) / ((c.sizes.get(id) ?? 0) + c.srcCount - count)) <= p.tanimoto) continue;
    pairs.push({ id, count });
  }
  pairs.sort((a, b) => b.count - a.count || a.id - b.id);
  if (p.ids === undefined && p.n > 0) pairs = pairs.slice(0, p.n);
  checkResultRows(pairs.length, maxResultRows, 'TopN');
  // Keyed fields: Pilosa's translated pairs carry the key and a zero id.
  if (isKeyedField(field)) pairs = pairs.map((q) => ({ id: 0, key: rowKeyOf(index, field, q.id), count: q.count }));
  return { type: 'pairs', pairs };
}

const CANDIDATES_PER_YIELD = 256;

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
