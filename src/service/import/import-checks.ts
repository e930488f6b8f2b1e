// Validation of import requests, shared by every import path: the target, the IDs and the shard
// of each column. The loops over pairs are work that pauses (Steps), so a large import can be
// checked off to the side (prepare-bits.ts) as well as inside one write.
import { badRequest } from '../../domain/errors.js';
import { fieldNotFoundNamed, indexNotFoundNamed } from '../../domain/messages.js';
import { EXISTS_FIELD } from '../../domain/names.js';
import { type IdArray, rebaseColumns } from '../../domain/id-array.js';
import { SHARD_WIDTH } from '../../domain/shard.js';
import { STEP_ITEMS, type Steps } from '../../util/steps.js';
import { checkBoolRow } from '../write-model/bits.js';
import type { BitsImport, ImportField, ImportIndex, ValuesImport } from './import-types.js';
import { fieldAsOf } from '../../state/field-as-of.js';
import type { ReadonlyField, ReadonlyHolder, ReadonlyIndex } from '../../state/readonly.js';

/** A request whose column IDs are exact numbers, relative to a base shard. */
export type Rebased<T> = T & { columnIds: IdArray };

/**
 * The request with its column IDs relative to baseShard (see rebaseColumns): the same object
 * when every ID is an exact number, so the common path allocates nothing.
 */
export function rebased<T extends BitsImport | ValuesImport>(wide: T): { req: Rebased<T>; baseShard: number } {
  const { ids, baseShard } = rebaseColumns(wide.columnIds, (m) => {
    throw badRequest(m);
  });
  const req = (ids === wide.columnIds ? wide : { ...wide, columnIds: ids }) as Rebased<T>;
  return { req, baseShard };
}

export function lookup(
  h: ReadonlyHolder,
  indexName: string,
  fieldName: string,
  /** Cluster mode: the command's meta offset; the field is then as the command saw it. */
  metaOffset?: string,
): { index: ReadonlyIndex; field: ReadonlyField } {
  const index = h.index(indexName);
  if (!index) throw indexNotFoundNamed(indexName);
  const field = fieldName === EXISTS_FIELD ? undefined : index.field(fieldName);
  if (!field) throw fieldNotFoundNamed(fieldName);
  return { index, field: fieldAsOf(field, metaOffset) };
}

/** Checks a bits import against its index and field; returns the number of pairs. */
export function* validateBits(
  index: ImportIndex,
  field: ImportField,
  req: Rebased<BitsImport>,
  baseShard: number,
): Steps<number> {
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
  else yield* checkIds(req.rowIds, 'row');
  yield* checkColumns(index, req.columnIds, req.columnKeys, req.shard, baseShard);
  return n;
}

function checkLengths(req: BitsImport): number {
  const rows = req.rowKeys.length > 0 ? req.rowKeys.length : req.rowIds.length;
  const cols = req.columnKeys.length > 0 ? req.columnKeys.length : req.columnIds.length;
  if (rows !== cols) throw badRequest(`row and column lists differ in length: ${rows} rows, ${cols} columns`);
  return rows;
}

function* checkIds(ids: IdArray, what: string): Steps<void> {
  if (ids instanceof Uint32Array) return; // every uint32 is a valid ID
  for (let lo = 0; lo < ids.length; lo += STEP_ITEMS) {
    checkIdRange(ids, what, lo, Math.min(ids.length, lo + STEP_ITEMS));
    yield;
  }
}

function checkIdRange(ids: IdArray, what: string, lo: number, hi: number): void {
  for (let i = lo; i < hi; i++) {
    const v = ids[i];
    if (!Number.isSafeInteger(v) || v < 0)
      throw badRequest(`${what} ID ${v} of item ${i} is not an unsigned integer below 2^53`);
  }
}

/** `ids` relative to baseShard (see rebased); `shard`, as the client named it, absolute. */
export function* checkColumns(
  index: ImportIndex,
  ids: IdArray,
  keys: string[],
  shard: number | undefined,
  baseShard: number,
): Steps<void> {
  if (index.options.keys) {
    if (ids.length > 0) throw badRequest('column ids cannot be used because index uses string keys');
    return;
  }
  if (keys.length > 0)
    throw badRequest(`column keys cannot be used because index ${index.name} does not use string keys`);
  yield* checkIds(ids, 'column');
  if (shard === undefined) return;
  const lo = (shard - baseShard) * SHARD_WIDTH;
  for (let from = 0; from < ids.length; from += STEP_ITEMS) {
    checkShardRange(ids, lo, shard, baseShard, from, Math.min(ids.length, from + STEP_ITEMS));
    yield;
  }
}

function checkShardRange(ids: IdArray, lo: number, shard: number, baseShard: number, from: number, to: number): void {
  const hi = lo + SHARD_WIDTH;
  for (let i = from; i < to; i++) {
    if (ids[i] < lo || ids[i] >= hi)
      throw badRequest(
        `column ${baseShard === 0 ? ids[i] : BigInt(ids[i]) + (BigInt(baseShard) << 20n)} of item ${i} is not in shard ${shard}`,
      );
  }
}
