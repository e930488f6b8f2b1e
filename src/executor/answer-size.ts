// The byte budget of one answer (--max-result-bytes) and the memory bound of one call's
// intermediate bitmaps (--max-query-memory). An answer's size is known before it is built: a
// bitmap call's columns from the cardinalities of its shards (counted only when the shard count
// alone could pass the bound), a row's attributes from their texts; pairs, groups and row IDs
// (already bounded by --max-result-rows) are added as each call ends. The sizes are those of the
// JSON answer, the larger encoding: protobuf varints are never longer than the decimal digits.
//
// Why a 400, as for --max-result-rows: Pilosa answers every execution error with 400, and the
// same query would be refused again; 413 would blame the request's body.
import { badRequest } from '../domain/errors.js';
import type { AttrMap } from '../domain/types.js';
import { type ColumnId, MAX_SAFE_SHARD, SHARD_WIDTH } from '../domain/shard.js';
import type { ReadContext } from './context.js';
import type { CallPartial } from './partial.js';
import type { BitmapPlan, ReadPlan } from './plan.js';
import type { QueryResponse, QueryResult } from './result.js';
import { countWork, type Work } from './run.js';
import { outShards } from './bitmap-eval.js';
import { resolveRow } from './refs.js';
import { ShardColumns } from './shard-columns.js';

const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;

/** The largest bitmap one shard can hold: 2^20 bits as bitset containers, plus their headers. */
export const SHARD_BITMAP_BYTES = SHARD_WIDTH / 8 + 16 * 64;

/** Bytes of the answer so far; refuses the query once they pass the bound. */
export class AnswerBytes {
  private used = 0;
  constructor(readonly max: number) {}

  add(bytes: number, what: string): void {
    this.used += bytes;
    if (this.max > 0 && this.used > this.max) {
      throw badRequest(
        `executing: the answer would be at least ${mib(this.used)} (${this.used} bytes, ${what}), over the bound of ${mib(this.max)} (max-result-bytes); narrow it with shards=, Count(), excludeColumns=true or fewer calls`,
      );
    }
  }
}

/** Digits of the largest column ID in shards up to `lastShard`, plus a comma. */
export function bytesPerColumn(lastShard: number): number {
  if (lastShard > MAX_SAFE_SHARD) return 21;
  return String((lastShard + 1) * SHARD_WIDTH).length + 1;
}

/** JSON size of an attribute map (strings as their UTF-16 length: escapes are rare). */
export function attrsBytes(attrs: AttrMap | undefined): number {
  if (attrs === undefined) return 2;
  let n = 2;
  for (const [k, v] of Object.entries(attrs)) n += k.length + 4 + (typeof v === 'string' ? v.length + 2 : 24);
  return n;
}

/**
 * Adds the size of every top-level bitmap call's answer before any is built: the shards' bound
 * first, the exact cardinalities only when that bound passes the budget. Yields between shards.
 */
export function* precountAnswer(ctx: ReadContext, plans: readonly ReadPlan[], budget: AnswerBytes): Work<void> {
  if (budget.max <= 0) return;
  const bitmaps: { ctx: ReadContext; plan: Extract<ReadPlan, { kind: 'bitmap' }> }[] = [];
  let bound = 0;
  for (const p of plans) {
    const found = topBitmap(ctx, p);
    if (found === undefined) continue;
    bitmaps.push(found);
    budget.add(attrsBytes(rowAttrs(found.ctx, found.plan)), 'row attributes');
    if (!found.ctx.opts.excludeColumns) bound += columnBound(found.ctx, found.plan.plan);
  }
  if (bound <= budget.max) return;
  for (const { ctx: c, plan } of bitmaps) {
    if (c.opts.excludeColumns) continue;
    const n = yield* countWork(c, plan.plan);
    budget.add(n * bytesPerColumn(lastShard(c, plan.plan)), 'columns');
  }
}

/** JSON size of a built result of the kinds precountAnswer does not count. */
export function resultBytes(r: QueryResult): number {
  switch (r.type) {
    case 'pairs':
      return r.pairs.reduce((n, p) => n + 40 + (p.key?.length ?? 0), 2);
    case 'groupcounts':
      return r.groups.reduce(
        (n, g) => n + 24 + g.group.reduce((m, f) => m + 32 + f.field.length + (f.rowKey?.length ?? 0), 0),
        2,
      );
    case 'rowids':
      return r.keys !== undefined ? r.keys.reduce((n, k) => n + k.length + 3, 16) : 12 + 21 * r.rows.length;
    case 'row':
      return r.keys === undefined ? 0 : r.keys.reduce((n, k) => n + k.length + 3, 0);
    default:
      return 64;
  }
}

/**
 * Bitmaps one evaluation of a plan in one shard keeps alive at once, at most: each combining node
 * builds one (its children's may be live rows, built nothing).
 */
export function builtBitmaps(p: BitmapPlan): number {
  switch (p.kind) {
    case 'row':
    case 'empty':
      return 0;
    case 'timeRow':
    case 'bsi':
      return 1;
    case 'not':
    case 'shift':
      return 1 + builtBitmaps(p.child);
    default:
      return p.children.reduce((n, c) => n + builtBitmaps(c), 1);
  }
}

/** Refuses a call whose intermediate bitmaps in one shard could pass `maxBytes` (0: no bound). */
export function checkBitmapMemory(p: BitmapPlan, maxBytes: number): void {
  if (maxBytes <= 0) return;
  const bytes = builtBitmaps(p) * SHARD_BITMAP_BYTES;
  if (bytes <= maxBytes) return;
  throw badRequest(
    `executing: the query's combinations could hold ${mib(bytes)} of bitmaps at once in one shard (${builtBitmaps(p)} built bitmaps of up to ${mib(SHARD_BITMAP_BYTES)}), over the bound of ${mib(maxBytes)} (max-query-memory); split the query`,
  );
}

function topBitmap(
  ctx: ReadContext,
  p: ReadPlan,
): { ctx: ReadContext; plan: Extract<ReadPlan, { kind: 'bitmap' }> } | undefined {
  if (p.kind === 'bitmap') return { ctx, plan: p };
  if (p.kind === 'options') return topBitmap(ctx.withSettings(p.settings), p.child);
  return undefined;
}

function rowAttrs(ctx: ReadContext, p: Extract<ReadPlan, { kind: 'bitmap' }>): AttrMap | undefined {
  if (p.attrs === undefined || ctx.opts.excludeRowAttrs) return undefined;
  const id = resolveRow(ctx.index, p.attrs.field, p.attrs.row);
  return id === undefined ? undefined : p.attrs.field.rowAttrs.get(id);
}

function lastShard(ctx: ReadContext, p: BitmapPlan): number {
  const shards = outShards(ctx, p);
  return shards[shards.length - 1] ?? 0;
}

/** The most a bitmap call can answer: every column of every shard it can have columns in. */
function columnBound(ctx: ReadContext, p: BitmapPlan): number {
  return outShards(ctx, p).length * SHARD_WIDTH * bytesPerColumn(lastShard(ctx, p));
}

/** Every bitmap a read plan evaluates, for the memory bound of its intermediates. */
export function bitmapPlansOf(p: ReadPlan): BitmapPlan[] {
  switch (p.kind) {
    case 'bitmap':
      return [p.plan];
    case 'count':
      return [p.child];
    case 'valCount':
    case 'minMaxRow':
    case 'groupBy':
      return p.filter === undefined ? [] : [p.filter];
    case 'topN':
      return p.src === undefined ? [] : [p.src];
    case 'options':
      return bitmapPlansOf(p.child);
    default:
      return [];
  }
}

/** A built answer's size, roughly (8 bytes a column): whether to write it in slices. */
export function roughAnswerBytes(resp: QueryResponse): number {
  let n = (resp.columnAttrs?.length ?? 0) * 32;
  for (const r of resp.results) n += resultBytes(r) + (r.type === 'row' ? r.columns.length * 8 : 0);
  return n;
}

/**
 * A cluster read's merged answer (cluster/reads/query-fanout.ts), counted from its partials before
 * they are merged into one answer: each bitmap call's columns from the lengths of the holders'
 * lists. The other kinds are counted with resultBytes once finalized (bounded by
 * --max-result-rows), as a single node counts them.
 */
export function countPartialColumns(parts: readonly (readonly CallPartial[])[], budget: AnswerBytes): void {
  if (budget.max <= 0 || parts.length === 0) return;
  for (let call = 0; call < parts[0].length; call++) {
    let n = 0;
    let last: ColumnId = 0;
    for (const node of parts) {
      const p = node[call];
      if (p?.kind !== 'columns' || p.columns.length === 0) continue;
      n += p.columns.length;
      const top = p.columns instanceof ShardColumns ? p.columns.last() : p.columns[p.columns.length - 1];
      if (top > last) last = top;
    }
    if (n > 0) budget.add(n * bytesPerColumn(Math.floor(Number(last) / SHARD_WIDTH)), 'columns');
  }
}
