// The import use case: validate a whole request first (nothing is applied when any item is bad),
// translate keys in bulk, then emit one event per (view, shard) — roaring deltas, not pairs —
// all in one engine.write, so one request is one atomic event group in the log. The rules for
// bits (exclusivity, views, existence, keys) are the write model's (service/write-model/), the
// same that PQL Set/Clear follow; Kafka-fed imports and legacy input come through decideBits.
import { badRequest } from '../../domain/errors.js';
import { fieldNotFoundNamed, indexNotFoundNamed } from '../../domain/messages.js';
import { EXISTS_FIELD, STANDARD_VIEW } from '../../domain/names.js';
import { type IdArray, rebaseColumns } from '../../domain/id-array.js';
import { SHARD_WIDTH } from '../../domain/shard.js';
import { isTimeViewOf } from '../../domain/time-quantum.js';
import type { Engine } from '../../engine/engine.js';
import type { EventSink } from '../../events/types.js';
import type { Field } from '../../state/field.js';
import type { Holder } from '../../state/holder.js';
import type { Index } from '../../state/index-state.js';
import {
  checkBoolRow,
  clearOtherRows,
  isExclusive,
  lastPerColumn,
  markExistsAll,
  setViews,
} from '../write-model/bits.js';
import { assignKeys, knownKeyIds, knownPairs } from '../write-model/keys.js';
import type { Bitmap } from '../../roaring/bitmap.js';
import { decodeRoaringPositions, RoaringFormatError } from '../../roaring/pilosa-roaring.js';
import type { BitsImport, RoaringImport, ValuesImport } from './import-types.js';
import { bucketByRow, splitByShard } from './row-buckets.js';

export type { BitsImport, RoaringImport, ValuesImport };

export class ImportService {
  constructor(private readonly engine: Engine) {}

  importBits(req: BitsImport): Promise<void> {
    return this.engine.write((h, sink) => this.decideBits(h, sink, req));
  }

  importValues(req: ValuesImport): Promise<void> {
    return this.engine.write((h, sink) => this.decideValues(h, sink, req));
  }

  /** import-roaring: per-view bitmaps of positions row·2^20 + column offset, for one shard. */
  importRoaring(req: RoaringImport): Promise<void> {
    // Decoding is pure and can be slow for big bodies: it happens before the write starts.
    const views = req.views.map((v) => ({ view: v.view, rows: decodeRoaring(v.data) }));
    return this.engine.write((h, sink) => {
      const { index, field } = lookup(h, req.index, req.field);
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
        sink.emit({
          type: req.clear ? 'BitsCleared' : 'BitsSet',
          index: index.name,
          field: field.name,
          view: v.view,
          shard: req.shard,
          rows,
          columns: rows.map((r) => v.rows.get(r)!),
        });
      }
    });
  }

  /** Validates and emits the events of a bit import (for callers that add events of their own). */
  decideBits(h: Holder, sink: EventSink, wide: BitsImport): void {
    const { index, field } = lookup(h, wide.index, wide.field);
    const { req, baseShard } = rebased(wide);
    if (field.options.type === 'int')
      throw badRequest(`field ${req.field} is an int field: import values (ImportValueRequest) instead`);
    const n = checkLengths(req);
    if (req.timestamps !== null && req.timestamps.length !== n)
      throw badRequest(`timestamps has ${req.timestamps.length} items but there are ${n} bits`);
    const hasTimes = req.timestamps !== null && req.timestamps.some((t) => t !== 0n);
    if (hasTimes && field.options.type !== 'time')
      throw badRequest(`timestamps given but field ${req.field} has no time quantum`);
    if (hasTimes && req.clear) throw badRequest('import clear is not supported with timestamps');
    if (field.options.type === 'bool') for (let i = 0; i < n; i++) checkBoolRow(field, req.rowIds[i], i);
    if (field.options.keys) {
      if (req.rowIds.length > 0) throw badRequest('row ids cannot be used because field uses string keys');
    } else if (req.rowKeys.length > 0)
      throw badRequest(`row keys cannot be used because field ${req.field} does not use string keys`);
    else checkIds(req.rowIds, 'row');
    checkColumns(index, req.columnIds, req.columnKeys, req.shard, baseShard);

    // Validation is over: from here on every step succeeds.
    const [rows, cols] = req.clear ? clearIds(index, field, req) : setIds(index, field, req, sink);
    const exclusive = isExclusive(field);
    const [r, c] = exclusive && !req.clear ? lastPerColumn(rows, cols) : [rows, cols];
    // Exclusive fields are never time fields, so timestamps stay aligned with r and c.
    // Existence rides on the BitsSet events themselves (apply ORs their columns into _exists),
    // so the log does not carry every imported column twice.
    const exists = !req.clear && index.existence !== undefined;
    for (const [view, sel] of viewSelections(field, req.timestamps, n)) {
      const vr = sel === undefined ? r : pick(r, sel);
      const vc = sel === undefined ? c : pick(c, sel);
      // A validated named shard holds every column: no need to scan for others.
      const shards =
        req.shard !== undefined && !index.options.keys
          ? new Map([[req.shard - baseShard, undefined]])
          : splitByShard(vc);
      for (const [relShard, idx] of shards) {
        const b = bucketByRow(vr, vc, relShard, idx);
        const shard = relShard + baseShard;
        if (exclusive && !req.clear) clearOtherRows(index.name, field, view, shard, b, sink);
        if (req.clear)
          sink.emit({
            type: 'BitsCleared',
            index: index.name,
            field: field.name,
            view,
            shard,
            rows: b.rows,
            columns: b.columns,
          });
        // b's bitmaps are this request's own: the fragment may keep them (adopt) rather than copy.
        else
          sink.emit({
            type: 'BitsSet',
            index: index.name,
            field: field.name,
            view,
            shard,
            rows: b.rows,
            columns: b.columns,
            adopt: true,
            ...(exists ? { exists } : {}),
          });
      }
    }
  }

  decideValues(h: Holder, sink: EventSink, wide: ValuesImport): void {
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
    checkColumns(index, req.columnIds, req.columnKeys, req.shard, baseShard);
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

/** A request whose column IDs are exact numbers, relative to a base shard. */
type Rebased<T> = T & { columnIds: IdArray };

/**
 * The request with its column IDs relative to baseShard (see rebaseColumns): the same object
 * when every ID is an exact number, so the common path allocates nothing.
 */
function rebased<T extends BitsImport | ValuesImport>(wide: T): { req: Rebased<T>; baseShard: number } {
  const { ids, baseShard } = rebaseColumns(wide.columnIds, (m) => {
    throw badRequest(m);
  });
  const req = (ids === wide.columnIds ? wide : { ...wide, columnIds: ids }) as Rebased<T>;
  return { req, baseShard };
}

function decodeRoaring(data: Uint8Array): Map<number, Bitmap> {
  try {
    return decodeRoaringPositions(data);
  } catch (err) {
    if (err instanceof RoaringFormatError) throw badRequest(err.message);
    throw err;
  }
}

function lookup(h: Holder, indexName: string, fieldName: string): { index: Index; field: Field } {
  const index = h.index(indexName);
  if (!index) throw indexNotFoundNamed(indexName);
  const field = fieldName === EXISTS_FIELD ? undefined : index.field(fieldName);
  if (!field) throw fieldNotFoundNamed(fieldName);
  return { index, field };
}

/** A set assigns the keys it names (one KeysAssigned per translator). */
function setIds(index: Index, field: Field, req: Rebased<BitsImport>, sink: EventSink): [IdArray, IdArray] {
  const rows = field.options.keys
    ? assignKeys(index.rowKeys.get(field.name), req.rowKeys, sink, index.name, field.name)
    : req.rowIds;
  const cols = index.options.keys ? assignKeys(index.columnKeys, req.columnKeys, sink, index.name, '') : req.columnIds;
  return [rows, cols];
}

/** A clear assigns nothing: pairs naming a key never assigned have no bit to clear. */
function clearIds(index: Index, field: Field, req: Rebased<BitsImport>): [IdArray, IdArray] {
  const rows = field.options.keys ? knownKeyIds(index.rowKeys.get(field.name), req.rowKeys) : req.rowIds;
  const cols = index.options.keys ? knownKeyIds(index.columnKeys, req.columnKeys) : req.columnIds;
  return field.options.keys || index.options.keys ? knownPairs(rows, cols) : [rows, cols];
}

function checkLengths(req: BitsImport): number {
  const rows = req.rowKeys.length > 0 ? req.rowKeys.length : req.rowIds.length;
  const cols = req.columnKeys.length > 0 ? req.columnKeys.length : req.columnIds.length;
  if (rows !== cols) throw badRequest(`row and column lists differ in length: ${rows} rows, ${cols} columns`);
  return rows;
}

function checkIds(ids: IdArray, what: string): void {
  if (ids instanceof Uint32Array) return; // every uint32 is a valid ID
  for (let i = 0; i < ids.length; i++) {
    const v = ids[i];
    if (!Number.isSafeInteger(v) || v < 0)
      throw badRequest(`${what} ID ${v} of item ${i} is not an unsigned integer below 2^53`);
  }
}

/** The error for an import-roaring view no query of the field would read (the name cut short). */
function notTimeView(view: string, field: Field): string {
  const name = view.length > 80 ? `${view.slice(0, 80)}…` : view;
  return `view ${name} is not a time view of field ${field.name} (time quantum ${field.options.timeQuantum}): views are named by the quantum's units, as 2006, 200601, 20060102 or 2006010215`;
}

/** `ids` relative to baseShard (see rebased); `shard`, as the client named it, absolute. */
function checkColumns(index: Index, ids: IdArray, keys: string[], shard: number | undefined, baseShard: number): void {
  if (index.options.keys) {
    if (ids.length > 0) throw badRequest('column ids cannot be used because index uses string keys');
    return;
  }
  if (keys.length > 0)
    throw badRequest(`column keys cannot be used because index ${index.name} does not use string keys`);
  checkIds(ids, 'column');
  if (shard === undefined) return;
  const lo = (shard - baseShard) * SHARD_WIDTH;
  const hi = lo + SHARD_WIDTH;
  for (let i = 0; i < ids.length; i++) {
    if (ids[i] < lo || ids[i] >= hi)
      throw badRequest(
        `column ${baseShard === 0 ? ids[i] : BigInt(ids[i]) + (BigInt(baseShard) << 20n)} of item ${i} is not in shard ${shard}`,
      );
  }
}

/** The views a request writes, each with the item indices it takes (undefined = all items). */
function viewSelections(field: Field, ts: BigInt64Array | null, n: number): Map<string, Uint32Array | undefined> {
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
  }
  for (const [v, l] of lists) out.set(v, Uint32Array.from(l));
  return out;
}

function pick(a: IdArray, sel: Uint32Array): Float64Array {
  const out = new Float64Array(sel.length);
  for (let i = 0; i < sel.length; i++) out[i] = a[sel[i]];
  return out;
}
