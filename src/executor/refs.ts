// Row and column references: IDs, or string keys translated through the index's translators.
// Reads never allocate: an unknown key reads as an empty row / absent column (Pilosa allocates
// an ID on any lookup, §8.8). Writes assign keys before they execute (service/query).
import type { Value } from '../pql/ast.js';
import { type Fail, MAX_ID, toSafe, uintValue } from './args.js';
import { safeUintToNumber } from './bigint-id.js';
import type { ColRef, Ref } from './plan.js';
import type { ColumnId } from '../domain/shard.js';
import type { ReadonlyField, ReadonlyIndex } from '../state/readonly.js';

/** Whether row values of this field are string keys (keys mean nothing on int and bool fields). */
export function isKeyedField(field: ReadonlyField): boolean {
  return field.options.keys && field.options.type !== 'int' && field.options.type !== 'bool';
}

/**
 * A row value: bool literals on bool fields, keys on keyed fields, otherwise a uint ID. Errors
 * read `prefix` + message: cheaper than a wrapping Fail, which would be allocated on every call.
 */
export function rowRef(field: ReadonlyField, v: Value, argName: string, f: Fail, prefix = ''): Ref {
  if (field.options.type === 'bool' && v.kind === 'bool') return v.value ? 1 : 0;
  if (v.kind === 'string' && isKeyedField(field)) return v.value;
  return uintId(v, argName, f, prefix);
}

/** uintValue then toSafe, with the prefixed Fail built only when one of them fails. */
function uintId(v: Value, argName: string, f: Fail, prefix: string): number {
  if (v.kind === 'int' && v.value >= 0n && v.value <= MAX_ID) return safeUintToNumber(v.value);
  const fp: Fail = (m) => f(prefix + m);
  return toSafe(uintValue(v, argName, fp), argName, fp);
}

/**
 * A column: a key, a number up to 2^53 − 1, else a bigint. The parser takes literals up to
 * 2^63 − 1 (Pilosa's limit, refused above with its message); columns go up to 2^64 − 1.
 */
export function colRef(index: ReadonlyIndex, v: Value, argName: string, f: Fail): ColRef {
  if (v.kind === 'string' && index.options.keys) return v.value;
  const id = uintValue(v, argName, f);
  return id <= MAX_ID ? safeUintToNumber(id) : id;
}

export function resolveRow(index: ReadonlyIndex, field: ReadonlyField, ref: Ref): number | undefined {
  return typeof ref === 'number' ? ref : index.rowKeys.get(field.name)?.id(ref);
}

export function resolveCol(index: ReadonlyIndex, ref: ColRef): ColumnId | undefined {
  return typeof ref === 'string' ? index.columnKeys.id(ref) : ref;
}

/**
 * Where an unknown key would sort among IDs: after every assigned one (Pilosa would allocate it
 * the next ID). Used for `previous=` so paging past an unknown key yields nothing further.
 */
export function rowOrdinal(index: ReadonlyIndex, field: ReadonlyField, ref: Ref): number {
  return resolveRow(index, field, ref) ?? index.rowKeys.get(field.name)?.nextId ?? 1;
}

export function rowKeyOf(index: ReadonlyIndex, field: ReadonlyField, id: number): string {
  return index.rowKeys.get(field.name)?.key(id) ?? '';
}

export function columnKeyOf(index: ReadonlyIndex, id: number): string {
  return index.columnKeys.key(id) ?? '';
}
