// The import use case: validate a whole request first (nothing is applied when any item is bad),
// translate keys in bulk, then emit one event per (view, shard) — roaring deltas, not pairs —
// as one group, so one request is one atomic event group in the log. The rules for bits
// (exclusivity, views, existence, keys) are the write model's (service/write-model/), the same
// that PQL Set/Clear follow; Kafka-fed imports and legacy input come through decideBits. Large
// ID imports are built off to the side first (prepare-bits.ts).
import { badRequest } from '../../domain/errors.js';
import { STANDARD_VIEW } from '../../domain/names.js';
import type { IdArray } from '../../domain/id-array.js';
import { SHARD_WIDTH } from '../../domain/shard.js';
import { isTimeViewOf } from '../../domain/time-quantum.js';
import type { Engine } from '../../engine/engine.js';
import type { CommitContext } from '../../engine/ports.js';
import type { EventSink } from '../../events/types.js';
import { clearOtherRows, isExclusive, lastPerColumn, markExistsAll } from '../write-model/bits.js';
import { assignKeys, knownKeyIds, knownPairs } from '../write-model/keys.js';
import type { Bitmap } from '../../roaring/bitmap.js';
import { decodeRoaringPositions, RoaringFormatError } from '../../roaring/pilosa-roaring.js';
import { runSteps } from '../../util/steps.js';
import { bucketBits, bucketEvents } from './bits-buckets.js';
import { checkColumns, lookup, type Rebased, rebased, validateBits } from './import-checks.js';
import type { BitsImport, RoaringImport, ValuesImport } from './import-types.js';
import { prepareBits } from './prepare-bits.js';
import { splitByShard } from './row-buckets.js';
import type { ReadonlyField, ReadonlyHolder, ReadonlyIndex } from '../../state/readonly.js';

export type { BitsImport, RoaringImport, ValuesImport };

export class ImportService {
  constructor(private readonly engine: Engine) {}

  importValues(req: ValuesImport, ctx: CommitContext = {}): Promise<void> {
    return this.engine.commit({ ...ctx, decide: (h, sink) => this.decideValues(h, sink, req) });
  }

  /** import-roaring: per-view bitmaps of positions row·2^20 + column offset, for one shard. */
  importRoaring(req: RoaringImport, ctx: CommitContext = {}): Promise<void> {
    // Decoding is pure and can be slow for big bodies: it happens before the write starts.
    const views = req.views.map((v) => ({ view: v.view, rows: decodeRoaring(v.data) }));
    return this.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        const { index, field } = lookup(h, req.index, req.field, req.metaOffset);
        if (field.options.type !== 'set' && field.options.type !== 'time')
          throw badRequest('roaring import is only supported for set and time fields');
        for (const v of views) {
          if (v.view !== STANDARD_VIEW && field.options.type !== 'time')
            throw badRequest(`view ${v.view} is not a view of ${field.options.type} field ${field.name}`);
          if (v.view !== STANDARD_VIEW && !isTimeViewOf(field.options.timeQuantum, v.view))
            throw badRequest(notTimeView(v.view, field));
        }
        for (const v of views) {
          if (v.rows.size === 0) continue;
          const rows = [...v.rows.keys()].sort((a, b) => a - b);
          const columns = rows.map((r) => v.rows.get(r)!);
          const delta = { index: index.name, field: field.name, view: v.view, shard: req.shard, rows, columns };
          // The decoded bitmaps are this request's own: apply may keep them (packed, as a bits
          // import's rows are: Fragment.adoptRows) instead of copying each.
          sink.emit(req.clear ? { type: 'BitsCleared', ...delta } : { type: 'BitsSet', ...delta, adopt: true });
        }
      },
    });
  }

  /**
   * A bits import: large ones are validated, bucketed and encoded off to the side while other
   * requests are answered (prepareBits), then committed in one short step that applies them once
   * durable (Engine.commit with `prepared`). Imports whose events depend on state a concurrent
   * write may change (keys to assign, mutex/bool rows to clear) are decided in one step, as are
   * prepared ones whose index or field changed meanwhile.
   */
  async importBits(req: BitsImport, ctx: CommitContext = {}): Promise<void> {
    const prepared = await prepareBits(this.engine, req);
    if (prepared !== undefined && (await this.engine.commit({ ...ctx, prepared: (h) => prepared.commit(h) }))) return;
    await this.engine.commit({ ...ctx, decide: (h, sink) => this.decideBits(h, sink, req) });
  }

  /** Validates and emits the events of a bit import (for callers that add events of their own). */
  decideBits(h: ReadonlyHolder, sink: EventSink, wide: BitsImport): void {
    const { index, field } = lookup(h, wide.index, wide.field, wide.metaOffset);
    const { req, baseShard } = rebased(wide);
    const n = runSteps(validateBits(index, field, req, baseShard));

    // Validation is over: from here on every step succeeds.
    const [rows, cols] = req.clear ? clearIds(index, field, req) : setIds(index, field, req, sink);
    const exclusive = isExclusive(field);
    const [r, c] = exclusive && !req.clear ? lastPerColumn(rows, cols) : [rows, cols];
    // Exclusive fields are never time fields, so timestamps stay aligned with r and c.
    const exists = !req.clear && index.existence !== undefined;
    for (const b of runSteps(bucketBits(index, field, req, r, c, n, baseShard))) {
      if (exclusive && !req.clear) clearOtherRows(index.name, field, b.view, b.shard, b, sink);
      for (const e of bucketEvents(index, field, b, req.clear, exists, Number.POSITIVE_INFINITY)) sink.emit(e);
    }
  }

  decideValues(h: ReadonlyHolder, sink: EventSink, wide: ValuesImport): void {
    const { index, field } = lookup(h, wide.index, wide.field);
    const { req, baseShard } = rebased(wide);
    if (field.options.type !== 'int') throw badRequest(`field ${req.field} is not an int field`);
    const n = index.options.keys ? req.columnKeys.length : req.columnIds.length;
    if (!req.clear && req.values.length !== n)
      throw badRequest(`values has ${req.values.length} items but columns has ${n}`);
    const { min, max } = field.options;
    if (!req.clear) {
      for (let i = 0; i < req.values.length; i++) {
        const v = req.values[i];
        if (v < min || v > max)
          throw badRequest(`value ${v} of item ${i} is out of range [${min}, ${max}] for field ${req.field}`);
      }
    }
    runSteps(checkColumns(index, req.columnIds, req.columnKeys, req.shard, baseShard));
    const cols = index.options.keys
      ? assignKeys(index.columnKeys, req.columnKeys, sink, index.name, '')
      : req.columnIds;
    const shards = splitByShard(cols);
    for (const [relShard, idx] of shards) {
      const shard = relShard + baseShard;
      const m = new Map<number, bigint>(); // last value per column wins
      const count = idx === undefined ? cols.length : idx.length;
      for (let j = 0; j < count; j++) {
        const i = idx === undefined ? j : idx[j];
        m.set(cols[i] - relShard * SHARD_WIDTH, req.clear ? 0n : req.values[i]);
      }
      const columns = Uint32Array.from(m.keys());
      if (req.clear) sink.emit({ type: 'ValuesCleared', index: index.name, field: field.name, shard, columns });
      else
        sink.emit({
          type: 'ValuesSet',
          index: index.name,
          field: field.name,
          shard,
          columns,
          values: BigInt64Array.from(m.values()),
        });
    }
    if (!req.clear) markExistsAll(index, cols, shards, sink, baseShard);
  }
}

function decodeRoaring(data: Uint8Array): Map<number, Bitmap> {
  try {
    return decodeRoaringPositions(data);
  } catch (err) {
    if (err instanceof RoaringFormatError) throw badRequest(err.message);
    throw err;
  }
}

/** A set assigns the keys it names (one KeysAssigned per translator). */
function setIds(
  index: ReadonlyIndex,
  field: ReadonlyField,
  req: Rebased<BitsImport>,
  sink: EventSink,
): [IdArray, IdArray] {
  const rows = field.options.keys
    ? assignKeys(index.rowKeys.get(field.name), req.rowKeys, sink, index.name, field.name)
    : req.rowIds;
  const cols = index.options.keys ? assignKeys(index.columnKeys, req.columnKeys, sink, index.name, '') : req.columnIds;
  return [rows, cols];
}

/** A clear assigns nothing: pairs naming a key never assigned have no bit to clear. */
function clearIds(index: ReadonlyIndex, field: ReadonlyField, req: Rebased<BitsImport>): [IdArray, IdArray] {
  const rows = field.options.keys ? knownKeyIds(index.rowKeys.get(field.name), req.rowKeys) : req.rowIds;
  const cols = index.options.keys ? knownKeyIds(index.columnKeys, req.columnKeys) : req.columnIds;
  return field.options.keys || index.options.keys ? knownPairs(rows, cols) : [rows, cols];
}

/** The error for an import-roaring view no query of the field would read (the name cut short). */
function notTimeView(view: string, field: ReadonlyField): string {
  const name = view.length > 80 ? `${view.slice(0, 80)}…` : view;
  return `view ${name} is not a time view of field ${field.name} (time quantum ${field.options.timeQuantum}): views are named by the quantum's units, as 2006, 200601, 20060102 or 2006010215`;
}
