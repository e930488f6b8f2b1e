// JSON records → the same import requests as HTTP imports (one BitsImport per set-like field,
// one ValuesImport per int field). A record is mapped whole or rejected with a reason (then it
// goes to the dead-letter topic): every check ImportService would make per bit is made here
// first, so a batch of mapped records imports without a DomainError.
import type { FieldOptions } from '../domain/types.js';
import type { BitsImport, ValuesImport } from '../service/import/import-service.js';
import type { Holder } from '../state/holder.js';
import type { IngestFieldSpec, IngestSpec } from './ingest-spec.js';

/** A target field as the schema has it now. */
interface Target {
  field: string;
  options: FieldOptions;
}

export interface Targets {
  byProp: Map<string, { spec: IngestFieldSpec; target: number }[]>;
  list: Target[];
}

export interface MappedRecord {
  column: number | string;
  /** Per bit: target index, row (ID or key). */
  bitTargets: number[];
  bitRows: (number | string)[];
  valueTargets: number[];
  values: bigint[];
  /** Target index → Unix nanoseconds for the bits of that target. */
  stamps: Map<number, bigint> | undefined;
}

/** Resolves the definition's fields against the schema; a string says why it no longer fits. */
export function resolveTargets(spec: IngestSpec, holder: Holder): Targets | string {
  const index = holder.index(spec.index);
  if (index === undefined) return `index ${spec.index} no longer exists`;
  if (('key' in spec.column) !== index.options.keys) return `index ${spec.index} changed its column keys option`;
  const list: Target[] = [];
  const seen = new Map<string, number>();
  const byProp = new Map<string, { spec: IngestFieldSpec; target: number }[]>();
  for (const f of spec.fields) {
    const field = index.field(f.field);
    if (field === undefined) return `field ${spec.index}/${f.field} no longer exists`;
    if ((f.mapping === 'int') !== (field.options.type === 'int')) return `field ${f.field} changed type to ${field.options.type}`;
    let t = seen.get(f.field);
    if (t === undefined) {
      t = list.length;
      list.push({ field: f.field, options: field.options });
      seen.set(f.field, t);
    }
    const actions = byProp.get(f.name);
    if (actions === undefined) byProp.set(f.name, [{ spec: f, target: t }]);
    else actions.push({ spec: f, target: t });
  }
  return { byProp, list };
}

const LEGACY_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/;

function parseTimestamp(v: unknown): bigint | string {
  if (typeof v !== 'string') return 'timestamp must be a string (YYYY-MM-DDTHH:MM or RFC 3339)';
  const m = LEGACY_TIME.exec(v);
  const ms = m !== null ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5]) : Date.parse(v);
  if (!Number.isFinite(ms) || ms < 0) return `invalid timestamp: ${v}`;
  return BigInt(ms) * 1_000_000n;
}

function rowValue(v: unknown, keys: boolean, what: string): number | string {
  if (keys) {
    if (typeof v !== 'string' || v === '') throw new MapError(`${what}: row key must be a non-empty string`);
    return v;
  }
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new MapError(`${what}: row ID must be a non-negative integer, got ${JSON.stringify(v)}`);
  return v;
}

function intValue(v: unknown, o: FieldOptions, what: string): bigint {
  let n: bigint;
  if (typeof v === 'number' && Number.isSafeInteger(v)) n = BigInt(v);
  else if (typeof v === 'string' && /^-?\d{1,19}$/.test(v)) n = BigInt(v);
  else throw new MapError(`${what}: int value must be an integer (beyond 2^53: a decimal string), got ${JSON.stringify(v)}`);
  if (n < o.min || n > o.max) throw new MapError(`${what}: value ${n} out of range [${o.min}, ${o.max}]`);
  return n;
}

class MapError extends Error {}

/** Own keys only: a value like "constructor" must not find Object.prototype. */
function lookupRow(map: Record<string, number> | undefined, key: string): number | undefined {
  return map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
}

/** Maps one message value; a string is the reason it cannot be mapped. */
export function mapRecord(value: Buffer | null, spec: IngestSpec, targets: Targets): MappedRecord | string {
  if (value === null || value.byteLength === 0) return 'empty message';
  let rec: unknown;
  try {
    rec = JSON.parse(value.toString('utf8'));
  } catch (err) {
    return `invalid JSON: ${(err as Error).message}`;
  }
  if (typeof rec !== 'object' || rec === null || Array.isArray(rec)) return 'record is not a JSON object';
  const r = rec as Record<string, unknown>;
  const colProp = 'field' in spec.column ? spec.column.field : spec.column.key;
  const colVal = r[colProp];
  let column: number | string;
  if ('field' in spec.column) {
    // Legacy rule: the primary key is a JSON number, truncated to a column ID.
    if (typeof colVal !== 'number' || !Number.isFinite(colVal) || colVal < 0 || colVal >= 2 ** 53) return `column ${colProp} must be a non-negative number`;
    column = Math.trunc(colVal);
  } else {
    if (typeof colVal !== 'string' || colVal === '') return `column key ${colProp} must be a non-empty string`;
    column = colVal;
  }
  const out: MappedRecord = { column, bitTargets: [], bitRows: [], valueTargets: [], values: [], stamps: undefined };
  try {
    for (const [prop, v] of Object.entries(r)) {
      if (prop === colProp || v === null) continue;
      const actions = targets.byProp.get(prop);
      if (actions === undefined) return `field not found: ${prop}`;
      for (const action of actions) mapValue(out, action, targets.list[action.target], prop, v);
    }
  } catch (err) {
    if (err instanceof MapError) return err.message;
    throw err;
  }
  return out;
}

/** Applies one mapping rule to one property value; throws MapError when it does not fit. */
function mapValue(out: MappedRecord, m: { spec: IngestFieldSpec; target: number }, t: Target, prop: string, v: unknown): void {
  switch (m.spec.mapping) {
    case 'value-to-row':
      for (const one of Array.isArray(v) ? v : [v]) {
        out.bitTargets.push(m.target);
        out.bitRows.push(rowValue(one, t.options.keys, prop));
      }
      return;
    case 'mapping': {
      const row = typeof v === 'string' || typeof v === 'number' ? lookupRow(m.spec.valueMap, String(v)) : undefined;
      if (row === undefined) throw new MapError(`${prop}: value ${JSON.stringify(v)} is not in valueMap`);
      out.bitTargets.push(m.target);
      out.bitRows.push(row);
      return;
    }
    case 'single-row-boolean':
      if (typeof v !== 'boolean') throw new MapError(`${prop}: single-row-boolean needs true or false, got ${JSON.stringify(v)}`);
      if (v) {
        out.bitTargets.push(m.target);
        out.bitRows.push(m.spec.rowID ?? 0);
      }
      return;
    case 'int':
      out.valueTargets.push(m.target);
      out.values.push(intValue(v, t.options, prop));
      return;
    case 'timestamp': {
      const ns = parseTimestamp(v);
      if (typeof ns === 'string') throw new MapError(`${prop}: ${ns}`);
      (out.stamps ??= new Map()).set(m.target, ns);
      return;
    }
  }
}

interface BitsAcc {
  rows: number[];
  rowKeys: string[];
  cols: number[];
  colKeys: string[];
  stamps: bigint[];
  stamped: boolean;
}

/** Builds one import per target field for a list of mapped records. */
export function buildImports(records: readonly MappedRecord[], spec: IngestSpec, targets: Targets): { bits: BitsImport[]; values: ValuesImport[] } {
  const keyedColumns = 'key' in spec.column;
  const bits = new Map<number, BitsAcc>();
  const values = new Map<number, { cols: number[]; colKeys: string[]; vals: bigint[] }>();
  for (const r of records) {
    for (let i = 0; i < r.bitTargets.length; i++) {
      const t = r.bitTargets[i];
      let acc = bits.get(t);
      if (acc === undefined) bits.set(t, (acc = { rows: [], rowKeys: [], cols: [], colKeys: [], stamps: [], stamped: false }));
      const row = r.bitRows[i];
      if (typeof row === 'string') acc.rowKeys.push(row);
      else acc.rows.push(row);
      if (typeof r.column === 'string') acc.colKeys.push(r.column);
      else acc.cols.push(r.column);
      const ts = r.stamps?.get(t) ?? 0n;
      if (ts !== 0n) acc.stamped = true;
      acc.stamps.push(ts);
    }
    for (let i = 0; i < r.valueTargets.length; i++) {
      const t = r.valueTargets[i];
      let acc = values.get(t);
      if (acc === undefined) values.set(t, (acc = { cols: [], colKeys: [], vals: [] }));
      if (typeof r.column === 'string') acc.colKeys.push(r.column);
      else acc.cols.push(r.column);
      acc.vals.push(r.values[i]);
    }
  }
  const index = spec.index;
  const bitImports: BitsImport[] = [...bits].map(([t, a]) => ({
    index,
    field: targets.list[t].field,
    rowIds: Float64Array.from(a.rows),
    columnIds: keyedColumns ? new Float64Array(0) : Float64Array.from(a.cols),
    timestamps: a.stamped ? BigInt64Array.from(a.stamps) : null,
    rowKeys: a.rowKeys,
    columnKeys: a.colKeys,
    clear: false,
  }));
  const valueImports: ValuesImport[] = [...values].map(([t, a]) => ({
    index,
    field: targets.list[t].field,
    columnIds: keyedColumns ? new Float64Array(0) : Float64Array.from(a.cols),
    values: BigInt64Array.from(a.vals),
    columnKeys: a.colKeys,
    clear: false,
  }));
  return { bits: bitImports, values: valueImports };
}
