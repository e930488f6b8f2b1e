// GroupBy(Rows(a), Rows(b), …, filter=, limit=, offset=, previous): the count of every
// combination of one row per child (∩ filter), count > 0 only, in lexicographic order of row
// IDs. Paging: groups start at the tuple of the children's `previous` rows (inclusive, except
// the last child which is exclusive; a child without one starts at its first row). `offset`
// skips groups before `limit` applies (Pilosa truncates to limit first, losing groups).
import { STANDARD_VIEW } from '../domain/names.js';
import { RoaringBitmap32 } from '../roaring/bitmap.js';
import type { FieldRow, QueryResult } from './result.js';
import { type RO, bitmapAt } from './bitmap-eval.js';
import { checkResultRows } from './budget.js';
import type { ReadContext } from './context.js';
import type { ReadPlan } from './plan.js';
import { isKeyedField, rowKeyOf, rowOrdinal } from './refs.js';
import { mergeRowIds, rowIds } from './rows.js';
import type { ReadonlyFragment, ReadonlyIndex } from '../state/readonly.js';

type Work<T> = Generator<void, T, undefined>;
export type Group = { ids: number[]; count: number };
type GroupByPlan = Extract<ReadPlan, { kind: 'groupBy' }>;
/** Per child: the rows it may take (children with limit/column), undefined for any row. */
export type AllowedRows = (number[] | undefined)[];

export function* groupBy(ctx: ReadContext, p: GroupByPlan): Work<QueryResult> {
  const allowed = yield* groupByAllowed(ctx, p);
  const groups = yield* groupByGroups(ctx, p, allowed);
  return groupByResult(ctx.index, p, groups, ctx.opts.maxResultRows);
}

/** Children with limit/column are evaluated over all shards first (as Pilosa does). */
export function* groupByAllowed(ctx: ReadContext, p: GroupByPlan): Work<AllowedRows> {
  const allowed: AllowedRows = [];
  for (const spec of p.children)
    allowed.push(spec.limit === undefined && spec.column === undefined ? undefined : yield* rowIds(ctx, spec));
  return allowed;
}

/** The allowed rows of disjoint shard sets as one. */
export function mergeAllowed(p: GroupByPlan, parts: readonly AllowedRows[]): AllowedRows {
  return p.children.map((spec, i) => {
    const lists: number[][] = [];
    for (const a of parts) {
      const l = a[i];
      if (l !== undefined) lists.push(l);
    }
    return spec.limit === undefined && spec.column === undefined ? undefined : mergeRowIds(spec, lists);
  });
}

/** Groups over all shards are within the first offset+limit of every shard (∞ without a limit). */
export function groupByCap(p: GroupByPlan): number {
  return p.limit === undefined ? Infinity : (p.offset ?? 0) + p.limit;
}

/** The groups of the context's shards, counts summed, in no order. */
export function* groupByGroups(ctx: ReadContext, p: GroupByPlan, allowedRows: AllowedRows): Work<Group[]> {
  if (allowedRows.some((a) => a !== undefined && a.length === 0)) return [];
  const allowed = allowedRows.map((a) => (a === undefined ? undefined : new Set(a)));
  const n = p.children.length;
  const start = p.children.map((s) => (s.previous === undefined ? 0 : rowOrdinal(ctx.index, s.field, s.previous)));
  if (p.children[n - 1].previous !== undefined) start[n - 1] += 1;
  // Each shard's first offset+limit groups contain the global first offset+limit.
  const cap = groupByCap(p);
  // Without a limit, stop as soon as the groups pass the result bound rather than at the end.
  const maxRows = cap === Infinity ? ctx.opts.maxResultRows : undefined;

  const merged = new Map<string, Group>();
  for (const s of ctx.shards) {
    const frags = p.children.map((spec) => ctx.fragment(spec.field, STANDARD_VIEW, s));
    if (frags.every((f): f is ReadonlyFragment => f !== undefined)) {
      const lists = frags.map((f, i) => f.rowIds().filter((id) => allowed[i]?.has(id) ?? true));
      const filter = p.filter === undefined ? undefined : bitmapAt(ctx, p.filter, s);
      for (const g of yield* shardGroups(frags, lists, filter, start, cap, maxRows)) {
        const key = g.ids.join(',');
        const prev = merged.get(key);
        if (prev === undefined) merged.set(key, g);
        else prev.count += g.count;
      }
      checkResultRows(merged.size, maxRows, 'GroupBy');
    }
    yield;
  }
  return [...merged.values()];
}

/** The groups of disjoint shard sets as one (a group's counts add up). */
export function mergeGroups(parts: readonly Group[][]): Group[] {
  if (parts.length === 1) return parts[0];
  const merged = new Map<string, Group>();
  for (const part of parts)
    for (const g of part) {
      const key = g.ids.join(',');
      const prev = merged.get(key);
      if (prev === undefined) merged.set(key, { ids: g.ids, count: g.count });
      else prev.count += g.count;
    }
  return [...merged.values()];
}

/** The first offset+limit groups in order: all a merge needs from one node (see groupByCap). */
export function firstGroups(p: GroupByPlan, groups: Group[]): Group[] {
  const cap = groupByCap(p);
  const sorted = [...groups].sort((a, b) => compareIds(a.ids, b.ids));
  return cap === Infinity ? sorted : sorted.slice(0, cap);
}

export function groupByResult(
  index: ReadonlyIndex,
  p: GroupByPlan,
  groups: Group[],
  maxResultRows: number | undefined,
): QueryResult {
  const offset = p.offset ?? 0;
  const maxRows = p.limit === undefined ? maxResultRows : undefined;
  checkResultRows(groups.length, maxRows, 'GroupBy');
  const sorted = [...groups].sort((a, b) => compareIds(a.ids, b.ids));
  const page = sorted.slice(offset, p.limit === undefined ? undefined : offset + p.limit);
  checkResultRows(page.length, maxResultRows, 'GroupBy');
  return {
    type: 'groupcounts',
    groups: page.map((g) => ({
      group: g.ids.map((id, i): FieldRow => {
        const field = p.children[i].field;
        return isKeyedField(field)
          ? { field: field.name, rowKey: rowKeyOf(index, field, id) }
          : { field: field.name, rowID: id };
      }),
      count: g.count,
    })),
  };
}

/** Row visits between two yields inside a shard: one shard's groups can take seconds. */
const VISITS_PER_YIELD = 32;

/**
 * Depth-first over the children's rows, carrying the running intersection; an explicit stack
 * rather than recursion, so that it can yield (suspend) between any two row visits.
 */
function* shardGroups(
  frags: ReadonlyFragment[],
  lists: number[][],
  filter: RO | undefined,
  start: number[],
  cap: number,
  maxRows: number | undefined,
): Work<Group[]> {
  const out: Group[] = [];
  if (filter?.isEmpty === true) return out;
  const n = frags.length;
  const last = n - 1;
  const ids = new Array<number>(n);
  const pos = new Array<number>(n);
  const tight = new Array<boolean>(n);
  const prefix = new Array<RO | undefined>(n);
  prefix[0] = filter;
  tight[0] = true;
  pos[0] = lowerBound(lists[0], start[0]);
  let visits = 0;
  for (let level = 0; level >= 0; ) {
    const list = lists[level];
    if (pos[level] >= list.length) {
      level--;
      continue;
    }
    if (++visits === VISITS_PER_YIELD) {
      visits = 0;
      yield;
    }
    const id = list[pos[level]++];
    const row = frags[level].row(id);
    if (row === undefined) continue;
    ids[level] = id;
    const p = prefix[level];
    if (level === last) {
      const count = p === undefined ? row.size : row.andCardinality(p);
      if (count > 0) {
        out.push({ ids: ids.slice(), count });
        if (out.length >= cap) return out;
        checkResultRows(out.length, maxRows, 'GroupBy');
      }
      continue;
    }
    const next = p === undefined ? row : RoaringBitmap32.and(p, row);
    if (next.isEmpty) continue;
    const t = tight[level] && id === start[level];
    level++;
    prefix[level] = next;
    tight[level] = t;
    pos[level] = t ? lowerBound(lists[level], start[level]) : 0;
  }
  return out;
}

function lowerBound(list: number[], v: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function compareIds(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}
