// JSON records → the same import requests as HTTP imports (one BitsImport per set-like field,
// one ValuesImport per int field). A message holds one record (a JSON object) or several (a JSON
// array of objects, like the legacy input endpoint's body). A record is mapped whole or rejected
// with a reason (then it goes to the dead-letter topic): every check ImportService makes per bit
// is made here first, so a batch of mapped records imports without a DomainError.
// Hot path: records are appended straight into per-field column arrays (a rejected record is
// rolled back by truncation), with no object per record or per bit.
import type { FieldOptions } from '../domain/types.js';
import type { BitsImport, ValuesImport } from '../service/import/import-service.js';
import type { IngestFieldSpec, IngestSpec } from './ingest-spec.js';
import type { ReadonlyHolder } from '../state/readonly.js';

/** A target field as the schema has it now. */
interface Target {
  field: string;
  options: FieldOptions;
}

interface Action {
  spec: IngestFieldSpec;
  target: number;
}

export interface Targets {
  byProp: Map<string, Action[]>;
  list: Target[];
}

/** Resolves the definition's fields against the schema; a string says why it no longer fits. */
export function resolveTargets(spec: IngestSpec, holder: ReadonlyHolder): Targets | string {
  const index = holder.index(spec.index);
  if (index === undefined) return `index ${spec.index} no longer exists`;
  if ('key' in spec.column !== index.options.keys) return `index ${spec.index} changed its column keys option`;
  const list: Target[] = [];
  const seen = new Map<string, number>();
  const byProp = new Map<string, Action[]>();
  for (const f of spec.fields) {
    const field = index.field(f.field);
    if (field === undefined) return `field ${spec.index}/${f.field} no longer exists`;
    if ((f.mapping === 'int') !== (field.options.type === 'int'))
      return `field ${f.field} changed type to ${field.options.type}`;
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

const MAX_NANOS_MS = Number((2n ** 63n - 1n) / 1_000_000n);

const LEGACY_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/;

function parseTimestamp(v: unknown, what: string): bigint {
  if (typeof v !== 'string') throw new MapError(`${what}: timestamp must be a string (YYYY-MM-DDTHH:MM or RFC 3339)`);
  const m = LEGACY_TIME.exec(v);
  const ms = m !== null ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5]) : Date.parse(v);
  if (!Number.isFinite(ms) || ms < 0) throw new MapError(`${what}: invalid timestamp: ${v}`);
  // Imports carry int64 nanoseconds: a later time would wrap around to a negative one.
  if (ms > MAX_NANOS_MS) throw new MapError(`${what}: timestamp ${v} is after 2262-04-11, the last int64 nanosecond`);
  return BigInt(ms) * 1_000_000n;
}

function intValue(v: unknown, o: FieldOptions, what: string): bigint {
  let n: bigint;
  if (typeof v === 'number' && Number.isSafeInteger(v)) n = BigInt(v);
  else if (typeof v === 'string' && /^-?\d{1,19}$/.test(v)) n = BigInt(v);
  else
    throw new MapError(
      `${what}: int value must be an integer (beyond 2^53: a decimal string), got ${JSON.stringify(v)}`,
    );
  if (n < o.min || n > o.max) throw new MapError(`${what}: value ${n} out of range [${o.min}, ${o.max}]`);
  return n;
}

class MapError extends Error {}

/** Own keys only: a value like "constructor" must not find Object.prototype. */
function lookupRow(map: Record<string, number> | undefined, key: string): number | undefined {
  return map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
}

/** A growable Float64Array: appends without per-item allocation; view() shares the buffer. */
class F64 {
  a = new Float64Array(1024);
  n = 0;

  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }

  view(): Float64Array {
    return this.a.subarray(0, this.n);
  }
}

/** Bits of one set-like field, column-major: IDs in typed arrays, keys in string arrays. */
class BitsAcc {
  readonly rows = new F64();
  readonly cols = new F64();
  rowKeys: string[] = [];
  colKeys: string[] = [];
  /** Per bit, only once some bit of this field carried a timestamp (0 = none). */
  stamps: bigint[] | undefined;
  /** Bits in the accumulator. */
  n = 0;

  push(row: number | string, col: number | string, stamp: bigint): void {
    if (typeof row === 'number') this.rows.push(row);
    else this.rowKeys.push(row);
    if (typeof col === 'number') this.cols.push(col);
    else this.colKeys.push(col);
    if (stamp !== 0n || this.stamps !== undefined) this.pushStamp(stamp);
    this.n++;
  }

  private pushStamp(stamp: bigint): void {
    if (this.stamps === undefined) this.stamps = new Array<bigint>(this.n).fill(0n);
    this.stamps.push(stamp);
  }

  truncate(n: number): void {
    if (n === this.n) return;
    // A field's rows are all IDs or all keys, and likewise its columns: one of each pair is empty.
    this.rows.n = Math.min(this.rows.n, n);
    this.rowKeys.length = Math.min(this.rowKeys.length, n);
    this.cols.n = Math.min(this.cols.n, n);
    this.colKeys.length = Math.min(this.colKeys.length, n);
    if (this.stamps !== undefined) this.stamps.length = n;
    this.n = n;
  }
}

class ValuesAcc {
  readonly cols = new F64();
  colKeys: string[] = [];
  vals: bigint[] = [];

  truncate(n: number): void {
    this.vals.length = n;
    this.cols.n = Math.min(this.cols.n, n);
    this.colKeys.length = Math.min(this.colKeys.length, n);
  }
}

/** Maps records one by one into the import requests of a batch. */
export class ImportBuilder {
  private readonly bits: BitsAcc[];
  private readonly values: ValuesAcc[];
  private readonly colProp: string;
  private readonly byId: boolean;
  /** Scratch per record: the timestamp of each target (0 = none), reset after each record. */
  private readonly stamps: bigint[];
  /** Scratch per record: accumulator sizes before it, for the rollback. */
  private readonly bitMarks: number[];
  private readonly valueMarks: number[];
  private readonly ignoreUnmapped: boolean;
  private readonly requiredProps: string[];

  constructor(
    private readonly spec: IngestSpec,
    private readonly targets: Targets,
  ) {
    this.bits = targets.list.map(() => new BitsAcc());
    this.values = targets.list.map(() => new ValuesAcc());
    this.stamps = targets.list.map(() => 0n);
    this.bitMarks = targets.list.map(() => 0);
    this.valueMarks = targets.list.map(() => 0);
    this.byId = 'field' in spec.column;
    this.colProp = 'field' in spec.column ? spec.column.field : spec.column.key;
    this.ignoreUnmapped = spec.unmappedProperties === 'ignore';
    this.requiredProps = [...new Set(spec.fields.filter((f) => f.required === true).map((f) => f.name))];
  }

  /**
   * Adds one message value: a JSON object (one record) or a JSON array of them (as the legacy
   * input endpoint takes). Returns the records added; each record that cannot be mapped (or the
   * whole message, index -1, when it is not JSON) is reported to `reject` and adds nothing.
   */
  add(value: Buffer | null, reject: (reason: string, index: number) => void): number {
    if (value === null || value.byteLength === 0) {
      reject('empty message', -1);
      return 0;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(value.toString('utf8'));
    } catch (err) {
      reject(`invalid JSON: ${(err as Error).message}`, -1);
      return 0;
    }
    if (!Array.isArray(parsed)) return this.addRecord(parsed, -1, reject);
    let added = 0;
    for (let i = 0; i < parsed.length; i++) added += this.addRecord(parsed[i], i, reject);
    return added;
  }

  private addRecord(rec: unknown, index: number, reject: (reason: string, index: number) => void): number {
    if (typeof rec !== 'object' || rec === null || Array.isArray(rec)) {
      reject('record is not a JSON object', index);
      return 0;
    }
    const r = rec as Record<string, unknown>;
    const colVal = r[this.colProp];
    let column: number | string;
    if (this.byId) {
      // Legacy rule: the primary key is a JSON number, truncated to a column ID.
      if (typeof colVal !== 'number' || !Number.isFinite(colVal) || colVal < 0 || colVal >= 2 ** 53) {
        reject(`column ${this.colProp} must be a non-negative number`, index);
        return 0;
      }
      column = Math.trunc(colVal);
    } else {
      if (typeof colVal !== 'string' || colVal === '') {
        reject(`column key ${this.colProp} must be a non-empty string`, index);
        return 0;
      }
      column = colVal;
    }
    const bitMarks = this.bitMarks;
    const valueMarks = this.valueMarks;
    for (let i = 0; i < bitMarks.length; i++) {
      bitMarks[i] = this.bits[i].n;
      valueMarks[i] = this.values[i].vals.length;
    }
    try {
      for (const prop of this.requiredProps)
        if (r[prop] === undefined || r[prop] === null) throw new MapError(`required property ${prop} is missing`);
      this.collectStamps(r);
      for (const prop in r) {
        const v = r[prop];
        if (prop === this.colProp || v === null) continue;
        const actions = this.targets.byProp.get(prop);
        if (actions === undefined) {
          if (this.ignoreUnmapped) continue;
          throw new MapError(
            `field not found: ${prop} (no field maps this property; set "unmappedProperties": "ignore" to skip such properties)`,
          );
        }
        for (const a of actions) this.mapValue(a, prop, v, column);
      }
    } catch (err) {
      if (!(err instanceof MapError)) throw err;
      this.bits.forEach((b, i) => b.truncate(bitMarks[i]));
      this.values.forEach((acc, i) => acc.truncate(valueMarks[i]));
      reject(err.message, index);
      return 0;
    } finally {
      this.stamps.fill(0n);
    }
    return 1;
  }

  /** The import requests for everything added so far. */
  build(): { bits: BitsImport[]; values: ValuesImport[] } {
    const index = this.spec.index;
    const bits: BitsImport[] = [];
    const values: ValuesImport[] = [];
    this.targets.list.forEach((t, i) => {
      const b = this.bits[i];
      if (b.n > 0) {
        bits.push({
          index,
          field: t.field,
          rowIds: b.rows.view(),
          columnIds: b.cols.view(),
          timestamps: b.stamps === undefined ? null : BigInt64Array.from(b.stamps),
          rowKeys: b.rowKeys,
          columnKeys: b.colKeys,
          clear: false,
        });
      }
      const v = this.values[i];
      if (v.vals.length > 0) {
        values.push({
          index,
          field: t.field,
          columnIds: v.cols.view(),
          values: BigInt64Array.from(v.vals),
          columnKeys: v.colKeys,
          clear: false,
        });
      }
    });
    return { bits, values };
  }

  /** Timestamps first: they apply to every bit the record sets in their field. */
  private collectStamps(r: Record<string, unknown>): void {
    for (const [prop, actions] of this.targets.byProp) {
      for (const a of actions) {
        if (a.spec.mapping !== 'timestamp') continue;
        const v = r[prop];
        if (v !== undefined && v !== null) this.stamps[a.target] = parseTimestamp(v, prop);
      }
    }
  }

  private mapValue(a: Action, prop: string, v: unknown, column: number | string): void {
    const t = a.target;
    switch (a.spec.mapping) {
      case 'value-to-row': {
        const o = this.targets.list[t].options;
        const acc = this.bits[t];
        const stamp = this.stamps[t];
        if (!Array.isArray(v)) acc.push(rowValue(v, o, prop), column, stamp);
        else for (let i = 0; i < v.length; i++) acc.push(rowValue(v[i], o, prop), column, stamp);
        return;
      }
      case 'mapping': {
        const row = typeof v === 'string' || typeof v === 'number' ? lookupRow(a.spec.valueMap, String(v)) : undefined;
        if (row === undefined) throw new MapError(`${prop}: value ${JSON.stringify(v)} is not in valueMap`);
        this.bits[t].push(row, column, this.stamps[t]);
        return;
      }
      case 'single-row-boolean':
        if (typeof v !== 'boolean')
          throw new MapError(`${prop}: single-row-boolean needs true or false, got ${JSON.stringify(v)}`);
        if (v) this.bits[t].push(a.spec.rowID ?? 0, column, this.stamps[t]);
        return;
      case 'int': {
        const acc = this.values[t];
        acc.vals.push(intValue(v, this.targets.list[t].options, prop));
        if (typeof column === 'number') acc.cols.push(column);
        else acc.colKeys.push(column);
        return;
      }
      case 'timestamp':
        return; // collected before the other properties
    }
  }
}

function rowValue(v: unknown, o: FieldOptions, what: string): number | string {
  if (o.keys) {
    if (typeof v !== 'string' || v === '') throw new MapError(`${what}: row key must be a non-empty string`);
    return v;
  }
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw new MapError(`${what}: row ID must be a non-negative integer, got ${JSON.stringify(v)}`);
  if (o.type === 'bool' && v > 1) throw new MapError(`${what}: a bool field takes rows 0 and 1, got ${v}`);
  return v;
}
