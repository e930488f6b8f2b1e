// From validated import pairs to events: the views each pair goes to (time fields), the shards,
// then one bitmap of column offsets per row (row-buckets.ts), as BitsSet / BitsCleared events.
// The work pauses between pieces (Steps), so a large import is built off to the side.
import type { IdArray } from '../../domain/id-array.js';
import type { Event } from '../../events/types.js';
import { STEP_ITEMS, type Steps } from '../../util/steps.js';
import { setViews } from '../write-model/bits.js';
import type { Rebased } from './import-checks.js';
import type { BitsImport, ImportField, ImportIndex } from './import-types.js';
import { bucketByRowSteps, gather, type RowBitmaps, splitByShard } from './row-buckets.js';

/** The row bitmaps of one (view, shard). */
export interface BitsBucket extends RowBitmaps {
  view: string;
  shard: number;
}

/** The (view, shard) buckets of pairs r, c (n pairs; IDs relative to baseShard). */
export function* bucketBits(
  index: ImportIndex,
  field: ImportField,
  req: Rebased<BitsImport>,
  r: IdArray,
  c: IdArray,
  n: number,
  baseShard: number,
): Steps<BitsBucket[]> {
  const out: BitsBucket[] = [];
  for (const [view, sel] of yield* viewSelections(field, req.timestamps, n)) {
    const vr = sel === undefined ? r : yield* gather(r, sel);
    const vc = sel === undefined ? c : yield* gather(c, sel);
    // A validated named shard holds every column: no need to scan for others.
    const shards =
      req.shard !== undefined && !index.options.keys ? new Map([[req.shard - baseShard, undefined]]) : splitByShard(vc);
    for (const [relShard, idx] of shards) {
      const b = yield* bucketByRowSteps(vr, vc, relShard, idx);
      out.push({ view, shard: relShard + baseShard, rows: b.rows, columns: b.columns });
    }
  }
  return out;
}

/**
 * The events of one bucket, each of at most about `maxBits` bits (one row at least), so that a
 * large import is encoded in pieces. Existence rides on the BitsSet events themselves (apply ORs
 * their columns into _exists), so the log does not carry every imported column twice. The row
 * bitmaps are this request's own: the fragment may keep them (adopt) rather than copy.
 */
export function bucketEvents(
  index: ImportIndex,
  field: ImportField,
  b: BitsBucket,
  clear: boolean,
  exists: boolean,
  maxBits: number,
): Event[] {
  const out: Event[] = [];
  const part = (from: number, to: number): Event => {
    const common = { index: index.name, field: field.name, view: b.view, shard: b.shard };
    const rows = from === 0 && to === b.rows.length ? b.rows : b.rows.slice(from, to);
    const columns = from === 0 && to === b.rows.length ? b.columns : b.columns.slice(from, to);
    if (clear) return { type: 'BitsCleared', ...common, rows, columns };
    return { type: 'BitsSet', ...common, rows, columns, adopt: true, ...(exists ? { exists } : {}) };
  };
  if (!Number.isFinite(maxBits)) return b.rows.length === 0 ? out : [part(0, b.rows.length)];
  let from = 0;
  let bits = 0;
  for (let i = 0; i < b.rows.length; i++) {
    bits += b.columns[i].size;
    if (bits >= maxBits || i === b.rows.length - 1) {
      out.push(part(from, i + 1));
      from = i + 1;
      bits = 0;
    }
  }
  return out;
}

/** The views a request writes, each with the item indices it takes (undefined = all items). */
function* viewSelections(
  field: ImportField,
  ts: BigInt64Array | null,
  n: number,
): Steps<Map<string, Uint32Array | undefined>> {
  const out = new Map<string, Uint32Array | undefined>();
  const hasTimes = ts !== null && ts.some((t) => t !== 0n);
  if (!hasTimes) {
    for (const v of setViews(field, undefined)) out.set(v, undefined);
    return out;
  }
  const lists = new Map<string, number[]>();
  for (let i = 0; i < n; i++) {
    const t = ts![i];
    // Nanoseconds in the request, milliseconds in the model; 0 = no timestamp.
    for (const v of setViews(field, t === 0n ? undefined : Number(t / 1_000_000n))) {
      let l = lists.get(v);
      if (!l) lists.set(v, (l = []));
      l.push(i);
    }
    if (i % STEP_ITEMS === STEP_ITEMS - 1) yield;
  }
  for (const [v, l] of lists) out.set(v, Uint32Array.from(l));
  return out;
}
