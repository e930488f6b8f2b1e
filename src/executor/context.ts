// What one call executes against: the index, its shard set and the result options. All fragment
// reads go through fragment(), which hides shards outside the set, so every call computes over
// exactly the data of the requested shards (Shift may still move columns into other shards).
import { type TimeWindow, viewPeriod, viewsByTimeRange } from '../domain/time-quantum.js';
import type { OptionSettings } from './plan.js';
import type { ReadonlyField, ReadonlyFragment, ReadonlyIndex, ReadonlyView } from '../state/readonly.js';

export interface ResultOptions {
  excludeColumns: boolean;
  excludeRowAttrs: boolean;
  maxResultRows?: number;
  /** Bytes one answer may take (--max-result-bytes); unset or 0: no bound. */
  maxResultBytes?: number;
  /** Bytes of bitmaps one call may build at once in one shard (--max-query-memory); 0: none. */
  maxQueryMemory?: number;
}

/**
 * The shards one node answers for (cluster mode: those of the log partitions it was asked for);
 * every shard list of the context, an Options(shards=…) one included, is cut down to it.
 */
export type ShardScope = (shard: number) => boolean;

export class ReadContext {
  /** Only for an explicit shard list: with all available shards, no other shard has data anyway. */
  private readonly shardSet: ReadonlySet<number> | undefined;
  private viewMemo: Map<object, string[]> | undefined;

  constructor(
    readonly index: ReadonlyIndex,
    /** Already cut down to `scope` (see scoped()). */
    readonly shards: readonly number[],
    readonly opts: ResultOptions,
    /** false when `shards` are all the index's available shards (the common case, checked free) */
    restricted = true,
    readonly scope?: ShardScope,
  ) {
    this.shardSet = restricted ? new Set(shards) : undefined;
  }

  fragment(field: ReadonlyField, view: string, shard: number): ReadonlyFragment | undefined {
    if (this.shardSet !== undefined && !this.shardSet.has(shard)) return undefined;
    return field.view(view)?.fragment(shard);
  }

  /** fragment(), with the view found already (a caller that reads it in many shards). */
  viewFragment(view: ReadonlyView, shard: number): ReadonlyFragment | undefined {
    if (this.shardSet !== undefined && !this.shardSet.has(shard)) return undefined;
    return view.fragment(shard);
  }

  /** The context an Options() child runs in. */
  withSettings(s: OptionSettings): ReadContext {
    const opts = {
      excludeColumns: s.excludeColumns ?? this.opts.excludeColumns,
      excludeRowAttrs: s.excludeRowAttrs ?? this.opts.excludeRowAttrs,
      maxResultRows: this.opts.maxResultRows,
      maxResultBytes: this.opts.maxResultBytes,
      maxQueryMemory: this.opts.maxQueryMemory,
    };
    if (s.shards === undefined)
      return new ReadContext(this.index, this.shards, opts, this.shardSet !== undefined, this.scope);
    return new ReadContext(this.index, scoped(normalizeShards(s.shards), this.scope), opts, true, this.scope);
  }

  /** Existing time views of `field` covering [from, to) (§3.6), computed once per plan node. */
  timeViews(owner: object, field: ReadonlyField, from: number, to: number): string[] {
    this.viewMemo ??= new Map();
    let views = this.viewMemo.get(owner);
    if (views === undefined) {
      views = existingTimeViews(field, from, to);
      this.viewMemo.set(owner, views);
    }
    return views;
  }
}

/** The context a query's calls run in: the request's shards and result options. */
export function queryContext(
  index: ReadonlyIndex,
  opts: ResultOptions & { shards?: readonly number[] },
  scope?: ShardScope,
): ReadContext {
  const explicit = opts.shards !== undefined && opts.shards.length > 0;
  const shards = shardsFor(index, opts.shards);
  if (scope === undefined) return new ReadContext(index, shards, opts, explicit);
  return new ReadContext(index, scoped(shards, scope), opts, true, scope);
}

function scoped(shards: readonly number[], scope: ShardScope | undefined): readonly number[] {
  return scope === undefined ? shards : shards.filter(scope);
}

const NO_SHARDS: readonly number[] = [0];

/**
 * The request's shards, else the index's shards with data, else [0] (Pilosa). The index's list
 * is shared, not copied: it is replaced, never mutated, when the layout changes.
 */
export function shardsFor(index: ReadonlyIndex, requested: readonly number[] | undefined): readonly number[] {
  if (requested !== undefined && requested.length > 0) return normalizeShards(requested);
  const s = index.shards();
  return s.length > 0 ? s : NO_SHARDS;
}

/** Ascending and unique: results list columns in shard order. */
function normalizeShards(shards: readonly number[]): number[] {
  return [...new Set(shards)].sort((a, b) => a - b);
}

export function existingTimeViews(field: ReadonlyField, from: number, to: number): string[] {
  const q = field.options.timeQuantum;
  const spans = timeSpans(field);
  if (q === '' || spans.length === 0) return [];
  return viewsByTimeRange(from, to, q, spans).filter((v) => field.views.has(v));
}

/** The periods of the field's existing time views: a range skips the time between them. */
function timeSpans(field: ReadonlyField): TimeWindow[] {
  const spans: TimeWindow[] = [];
  for (const name of field.views.keys()) {
    const p = viewPeriod(name);
    if (p !== undefined) spans.push({ from: p.start, to: p.end });
  }
  return spans;
}
