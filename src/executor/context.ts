// What one call executes against: the index, its shard set and the result options. All fragment
// reads go through fragment(), which hides shards outside the set, so every call computes over
// exactly the data of the requested shards (Shift may still move columns into other shards).
import { type TimeWindow, viewPeriod, viewsByTimeRange } from '../domain/time-quantum.js';
import type { Field } from '../state/field.js';
import type { Fragment } from '../state/fragment.js';
import type { Index } from '../state/index-state.js';
import type { OptionSettings } from './plan.js';

export interface ResultOptions {
  excludeColumns: boolean;
  excludeRowAttrs: boolean;
}

export class ReadContext {
  readonly shardSet: ReadonlySet<number>;
  private readonly viewMemo = new Map<object, string[]>();

  constructor(
    readonly index: Index,
    readonly shards: readonly number[],
    readonly opts: ResultOptions,
    /** ms since epoch; `to` defaults to now + 1 day */
    readonly now: number,
  ) {
    this.shardSet = new Set(shards);
  }

  fragment(field: Field, view: string, shard: number): Fragment | undefined {
    if (!this.shardSet.has(shard)) return undefined;
    return field.view(view)?.fragment(shard);
  }

  /** The context an Options() child runs in. */
  withSettings(s: OptionSettings): ReadContext {
    return new ReadContext(this.index, s.shards ?? this.shards, {
      excludeColumns: s.excludeColumns ?? this.opts.excludeColumns,
      excludeRowAttrs: s.excludeRowAttrs ?? this.opts.excludeRowAttrs,
    }, this.now);
  }

  /** Existing time views of `field` covering [from, to) (§3.6), computed once per plan node. */
  timeViews(owner: object, field: Field, from: number, to: number): string[] {
    let views = this.viewMemo.get(owner);
    if (views === undefined) {
      views = existingTimeViews(field, from, to);
      this.viewMemo.set(owner, views);
    }
    return views;
  }
}

/** The request's shards, else the index's shards with data, else [0] (Pilosa). */
export function shardsFor(index: Index, requested: readonly number[] | undefined): number[] {
  if (requested !== undefined && requested.length > 0) return [...new Set(requested)].sort((a, b) => a - b);
  const s = index.shards();
  return s.length > 0 ? s : [0];
}

export function existingTimeViews(field: Field, from: number, to: number): string[] {
  const q = field.options.timeQuantum;
  const window = timeWindow(field);
  if (q === '' || window === undefined) return [];
  return viewsByTimeRange(from, to, q, window).filter((v) => field.views.has(v));
}

/** The span of time the field's existing time views cover, or undefined when it has none. */
export function timeWindow(field: Field): TimeWindow | undefined {
  let from = Infinity;
  let to = -Infinity;
  for (const name of field.views.keys()) {
    const p = viewPeriod(name);
    if (p === undefined) continue;
    from = Math.min(from, p.start);
    to = Math.max(to, p.end);
  }
  return from < to ? { from, to } : undefined;
}
