// GroupBy(Rows(a), Rows(b), …, filter=, limit=, offset=, previous): the count of every
// combination of one row per child (∩ filter), count > 0 only, in lexicographic order of row
// IDs. Paging: groups start at the tuple of the children's `previous` rows (inclusive, except
// the last child which is exclusive; a child without one starts at its first row). `offset`
// skips groups before `limit` applies (Pilosa truncates to limit first, losing groups).
import { STANDARD_VIEW } from '../domain/names.js';
import type { Fragment } from '../state/fragment.js';
import { RoaringBitmap32 } from '../roaring/bitmap.js';
import type { FieldRow, QueryResult } from './result.js';
import { type RO, bitmapAt } from './bitmap-eval.js';
import type { ReadContext } from './context.js';
import type { ReadPlan } from './plan.js';
import { isKeyedField, rowKeyOf, rowOrdinal } from './refs.js';
import { rowIds } from './rows.js';

type Work<T> = Generator<void, T, undefined>;
type Group = { ids: number[]; count: number };

export function* groupBy(ctx: ReadContext, p: Extract<ReadPlan, { kind: 'groupBy' }>): Work<QueryResult> {
  const n = p.children.length;
  // Children with limit/column are evaluated over all shards first (as Pilosa does).
  const allowed: (Set<number> | undefined)[] = [];
  for (const spec of p.children) {
    if (spec.limit === undefined && spec.column === undefined) {
      allowed.push(undefined);
      continue;
    }
    const ids = yield* rowIds(ctx, spec);
    if (ids.length === 0) return { type: 'groupcounts', groups: [] };
    allowed.push(new Set(ids));
  }
  const start = p.children.map((s) => (s.previous === undefined ? 0 : rowOrdinal(ctx.index, s.field, s.previous)));
  if (p.children[n - 1].previous !== undefined) start[n - 1] += 1;
  const offset = p.offset ?? 0;
  // Each shard's first offset+limit groups contain the global first offset+limit.
  const cap = p.limit === undefined ? Infinity : offset + p.limit;

  const merged = new Map<string, Group>();
  for (const s of ctx.shards) {
    const frags = p.children.map((spec) => ctx.fragment(spec.field, STANDARD_VIEW, s));
    if (frags.every((f): f is Fragment => f !== undefined)) {
      const lists = frags.map((f, i) => f.rowIds().filter((id) => allowed[i]?.has(id) ?? true));
      const filter = p.filter === undefined ? undefined : bitmapAt(ctx, p.filter, s);
      for (const g of shardGroups(frags, lists, filter, start, cap)) {
        const key = g.ids.join(',');
        const prev = merged.get(key);
        if (prev === undefined) merged.set(key, g);
        else prev.count += g.count;
      }
    }
    yield;
  }
  const sorted = [...merged.values()].sort((a, b) => compareIds(a.ids, b.ids));
  const page = sorted.slice(offset, p.limit === undefined ? undefined : offset + p.limit);
  return {
    type: 'groupcounts',
    groups: page.map((g) => ({
      group: g.ids.map((id, i): FieldRow => {
        const field = p.children[i].field;
        return isKeyedField(field) ? { field: field.name, rowKey: rowKeyOf(ctx.index, field, id) } : { field: field.name, rowID: id };
      }),
      count: g.count,
    })),
  };
}

/** Depth-first over the children's rows, carrying the running intersection. */
function shardGroups(frags: Fragment[], lists: number[][], filter: RO | undefined, start: number[], cap: number): Group[] {
  const out: Group[] = [];
  if (filter?.isEmpty === true) return out;
  const ids: number[] = [];
  const last = frags.length - 1;
  const visit = (level: number, prefix: RO | undefined, tight: boolean): boolean => {
    const list = lists[level];
    for (let i = tight ? lowerBound(list, start[level]) : 0; i < list.length; i++) {
      const id = list[i];
      const row = frags[level].row(id);
      if (row === undefined) continue;
      ids[level] = id;
      if (level === last) {
        const count = prefix === undefined ? row.size : row.andCardinality(prefix);
        if (count > 0) {
          out.push({ ids: ids.slice(), count });
          if (out.length >= cap) return false;
        }
        continue;
      }
      const next = prefix === undefined ? row : RoaringBitmap32.and(prefix, row);
      if (next.isEmpty) continue;
      if (!visit(level + 1, next, tight && id === start[level])) return false;
    }
    return true;
  };
  visit(0, filter, true);
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
