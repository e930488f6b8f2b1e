// Merging partial results (partial.ts) of disjoint shard sets, and finalizing the merged
// partial into exactly the CallOutput one node computes over all shards: order, limits,
// offsets, tie-breaks, the result bound (--max-result-rows), keys and attributes come here,
// after the merge, never per node.
import { type ColumnId, SHARD_WIDTH } from '../domain/shard.js';
import { AnswerBytes, countPartialColumns, resultBytes } from './answer-size.js';
import { mergeBestRow, mergeValCount, minMaxRowResult, valCountResult } from './aggregate.js';
import type { ResultOptions } from './context.js';
import { groupByResult, mergeAllowed, mergeGroups } from './group-by.js';
import { type CallPartial, type CallPrep, innermostPlan } from './partial.js';
import type { ReadPlan } from './plan.js';
import { respond } from './respond.js';
import type { QueryOptions, QueryResponse, RowColumns } from './result.js';
import { SHARD_COLUMNS_FROM, ShardColumns, type ShardOffsets, columnArray } from './shard-columns.js';
import { mergeRowIds, rowsResult } from './rows.js';
import { type CallOutput, bitmapOutput } from './run.js';
import { type TopNCounts, topNCandidateFilter, topNResult } from './topn.js';
import type { ReadonlyIndex } from '../state/readonly.js';

/** Phase one of all shards from every node's: TopN candidates (attr-filtered), GroupBy rows. */
export function mergePreps(plan: ReadPlan, preps: readonly CallPrep[]): CallPrep {
  const p = innermostPlan(plan);
  if (p.kind === 'topN' && p.ids === undefined) {
    const set = new Set<number>();
    for (const prep of preps) if (prep.kind === 'topN') for (const r of prep.candidates) set.add(r);
    return { kind: 'topN', candidates: topNCandidateFilter(p, [...set]) };
  }
  if (p.kind === 'groupBy' && preps.some((x) => x.kind === 'groupBy'))
    return {
      kind: 'groupBy',
      allowed: mergeAllowed(
        p,
        preps.flatMap((x) => (x.kind === 'groupBy' ? [x.allowed] : [])),
      ),
    };
  return { kind: 'none' };
}

/** The partials of one call from disjoint shard sets as one partial. */
export function mergePartials(plan: ReadPlan, parts: readonly CallPartial[]): CallPartial {
  const p = innermostPlan(plan);
  if (parts.length === 0) throw new Error('merging no partials');
  if (parts.length === 1) return parts[0];
  const kind = parts[0].kind;
  if (parts.some((x) => x.kind !== kind)) throw new Error(`partials of different kinds for a ${p.kind} call`);
  switch (p.kind) {
    case 'bitmap':
      return { kind: 'columns', columns: mergeColumns(parts.map((x) => (x.kind === 'columns' ? x.columns : []))) };
    case 'count': {
      let n = 0;
      for (const x of parts) if (x.kind === 'count') n += x.n;
      return { kind: 'count', n };
    }
    case 'valCount': {
      let acc: (CallPartial & { kind: 'valCount' })['acc'];
      for (const x of parts) if (x.kind === 'valCount') acc = mergeValCount(p.op, acc, x.acc);
      return { kind: 'valCount', acc };
    }
    case 'minMaxRow': {
      let best: (CallPartial & { kind: 'best' })['best'];
      for (const x of parts) if (x.kind === 'best') best = mergeBestRow(p, best, x.best);
      return { kind: 'best', best };
    }
    case 'topN':
      return { kind: 'topN', counts: mergeTopN(parts.flatMap((x) => (x.kind === 'topN' ? [x.counts] : []))) };
    case 'rows':
      return {
        kind: 'rows',
        ids: mergeRowIds(
          p.spec,
          parts.map((x) => (x.kind === 'rows' ? x.ids : [])),
        ),
      };
    case 'groupBy':
      return { kind: 'groups', groups: mergeGroups(parts.map((x) => (x.kind === 'groups' ? x.groups : []))) };
  }
}

/**
 * Columns of disjoint shard sets, each list ascending, as one ascending list. A large one is
 * ShardColumns holding every holder's shard offsets in shard order, not copied (the shards of
 * different holders are disjoint): a merge of any size is a sort of its shards. A small one (or
 * one with columns past 2^53) is an array, by a linear merge of the few lists (one per holder)
 * into an array made at its final length (a sort of 10M columns held the coordinator for seconds).
 */
function mergeColumns(lists: readonly RowColumns[]): RowColumns {
  const nonEmpty = lists.filter((l) => l.length > 0);
  if (nonEmpty.length <= 1) return nonEmpty[0] ?? [];
  const total = nonEmpty.reduce((n, l) => n + l.length, 0);
  if (total >= SHARD_COLUMNS_FROM) {
    const parts = shardParts(nonEmpty);
    if (parts !== undefined) return new ShardColumns(parts);
  }
  const arrays = nonEmpty.map(columnArray);
  const out = new Array<ColumnId>(total);
  const at = arrays.map(() => 0);
  for (let n = 0; n < total; n++) {
    let best = -1;
    for (let i = 0; i < arrays.length; i++)
      if (at[i] < arrays[i].length && (best < 0 || arrays[i][at[i]] < arrays[best][at[best]])) best = i;
    out[n] = arrays[best][at[best]++];
  }
  return out;
}

/** Every list's shards in shard order; undefined when a column is past 2^53 or two lists share a shard. */
function shardParts(lists: readonly RowColumns[]): ShardOffsets[] | undefined {
  const parts: ShardOffsets[] = [];
  for (const l of lists) {
    if (l instanceof ShardColumns) parts.push(...l.parts);
    else {
      const split = splitByShard(l);
      if (split === undefined) return undefined;
      parts.push(...split);
    }
  }
  parts.sort((a, b) => a.shard - b.shard);
  for (let i = 1; i < parts.length; i++) if (parts[i].shard === parts[i - 1].shard) return undefined;
  return parts;
}

/** An ascending array (a small holder's list) as its shards' offsets; undefined past 2^53. */
function splitByShard(cols: readonly ColumnId[]): ShardOffsets[] | undefined {
  const out: ShardOffsets[] = [];
  let from = 0;
  while (from < cols.length) {
    const c0 = cols[from];
    if (typeof c0 !== 'number') return undefined;
    const shard = Math.floor(c0 / SHARD_WIDTH);
    const base = shard * SHARD_WIDTH;
    let to = from;
    while (to < cols.length && typeof cols[to] === 'number' && (cols[to] as number) - base < SHARD_WIDTH) to++;
    const offsets = new Uint32Array(to - from);
    for (let i = from; i < to; i++) offsets[i - from] = (cols[i] as number) - base;
    out.push({ shard, offsets });
    from = to;
  }
  return out;
}

function mergeTopN(parts: readonly TopNCounts[]): TopNCounts {
  const counts = new Map<number, number>();
  const sizes = new Map<number, number>();
  let srcCount = 0;
  for (const c of parts) {
    for (const [id, n] of c.counts) counts.set(id, (counts.get(id) ?? 0) + n);
    for (const [id, n] of c.sizes) sizes.set(id, (sizes.get(id) ?? 0) + n);
    srcCount += c.srcCount;
  }
  return { counts, sizes, srcCount };
}

/** The call's output from its partial over all shards. `opts`: the query's result options. */
export function finalizeCall(index: ReadonlyIndex, plan: ReadPlan, part: CallPartial, opts: ResultOptions): CallOutput {
  if (plan.kind === 'options') {
    const s = plan.settings;
    const out = finalizeCall(index, plan.child, part, {
      excludeColumns: s.excludeColumns ?? opts.excludeColumns,
      excludeRowAttrs: s.excludeRowAttrs ?? opts.excludeRowAttrs,
      maxResultRows: opts.maxResultRows,
    });
    return s.columnAttrs === true ? { ...out, columnAttrs: true } : out;
  }
  const max = opts.maxResultRows;
  switch (plan.kind) {
    case 'bitmap':
      return bitmapOutput(index, plan, expect(part, 'columns').columns, opts);
    case 'count':
      return { result: { type: 'count', n: expect(part, 'count').n } };
    case 'valCount':
      return { result: valCountResult(expect(part, 'valCount').acc) };
    case 'minMaxRow':
      return { result: minMaxRowResult(index, plan, expect(part, 'best').best) };
    case 'topN':
      return { result: topNResult(index, plan, expect(part, 'topN').counts, max) };
    case 'rows':
      return { result: rowsResult(index, plan.spec, expect(part, 'rows').ids, max) };
    case 'groupBy':
      return { result: groupByResult(index, plan, expect(part, 'groups').groups, max) };
  }
}

function expect<K extends CallPartial['kind']>(part: CallPartial, kind: K): Extract<CallPartial, { kind: K }> {
  if (part.kind !== kind) throw new Error(`a ${part.kind} partial where a ${kind} one belongs`);
  return part as Extract<CallPartial, { kind: K }>;
}

/**
 * The response from every call's partials of every node (parts[node][call]): merged,
 * finalized, plus the response-level columnAttrs, as respond() builds it for one node.
 */
export function finalizeQuery(
  index: ReadonlyIndex,
  plans: readonly ReadPlan[],
  parts: readonly (readonly CallPartial[])[],
  opts: QueryOptions,
): QueryResponse {
  const merged = mergeAllPartials(plans, parts);
  const outputs = plans.map((plan, i) => finalizeCall(index, plan, merged[i], opts));
  return respond(index, outputs, opts.columnAttrs);
}

/** Every call's partial over all shards from every node's (parts[node][call]). */
export function mergeAllPartials(
  plans: readonly ReadPlan[],
  parts: readonly (readonly CallPartial[])[],
): CallPartial[] {
  return plans.map((plan, i) =>
    mergePartials(
      plan,
      parts.map((node) => node[i]),
    ),
  );
}

/**
 * finalizeQuery within --max-result-bytes (opts.maxResultBytes): the bitmap calls' columns are
 * counted from the partials before they are merged, the other results once finalized.
 */
export function finalizeWithinBytes(
  index: ReadonlyIndex,
  plans: readonly ReadPlan[],
  parts: readonly (readonly CallPartial[])[],
  opts: QueryOptions,
): QueryResponse {
  const bytes = new AnswerBytes(opts.maxResultBytes ?? 0);
  countPartialColumns(parts, bytes);
  const response = finalizeQuery(index, plans, parts, opts);
  for (const r of response.results) bytes.add(resultBytes(r), r.type);
  return response;
}

/** Every call's phase one over all shards from every node's (preps[node][call]). */
export function mergeAllPreps(plans: readonly ReadPlan[], preps: readonly (readonly CallPrep[])[]): CallPrep[] {
  return plans.map((plan, i) =>
    mergePreps(
      plan,
      preps.map((node) => node[i]),
    ),
  );
}
