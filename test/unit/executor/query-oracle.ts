// A naive model of an index for differential tests: plain sets of (row, column) per field, a
// Map column → value for int fields, and the time views of every timed bit. It knows nothing of
// shards, bitmaps or BSI; it shares only the time-view naming and range rules with the server
// (those are tested against Pilosa's own examples in test/unit/domain).
import { SHARD_WIDTH } from '../../../src/domain/shard.js';
import {
  type TimeWindow,
  ZERO_TIME,
  addDays,
  viewPeriod,
  viewsByTimeRange,
  viewsForTimestamp,
} from '../../../src/domain/time-quantum.js';

export type FieldType = 'set' | 'mutex' | 'bool' | 'time' | 'int';

export interface FieldSpec {
  name: string;
  type: FieldType;
  keys: boolean;
  quantum: string;
  noStd: boolean;
  min: bigint;
  max: bigint;
  cacheType: 'ranked' | 'lru';
}

export interface Schema {
  keys: boolean;
  exists: boolean;
  fields: FieldSpec[];
}

/** A row or column as written in PQL: an ID, a key, or a bool literal. */
export type Name = number | string | boolean;

export type Expr =
  | { k: 'row'; f: string; r: Name }
  | { k: 'time'; f: string; r: Name; from?: number; to?: number }
  | { k: 'cmp'; f: string; op: '==' | '!=' | '<' | '<=' | '>' | '>='; v: bigint }
  | { k: 'between'; f: string; lo: bigint; hi: bigint }
  | { k: 'notNull'; f: string }
  | { k: 'nary'; op: 'Union' | 'Intersect' | 'Difference' | 'Xor'; kids: Expr[] }
  | { k: 'not'; kid: Expr }
  | { k: 'shift'; kid: Expr; n: number };

type Cols = Set<number>;

export class Oracle {
  readonly colIds = new Map<string, number>();
  readonly rowIds = new Map<string, Map<string, number>>();
  /** field → row → columns (standard view) */
  readonly std = new Map<string, Map<number, Cols>>();
  /** field → row → column → time views holding the bit */
  readonly timed = new Map<string, Map<number, Map<number, Set<string>>>>();
  readonly values = new Map<string, Map<number, bigint>>();
  readonly exists: Cols = new Set();

  constructor(
    readonly schema: Schema,
    readonly now: number,
  ) {}

  field(name: string): FieldSpec {
    const f = this.schema.fields.find((x) => x.name === name);
    if (f === undefined) throw new Error(`no field ${name}`);
    return f;
  }

  // --- keys -----------------------------------------------------------------------------------

  col(c: Name, assign: boolean): number | undefined {
    if (typeof c === 'number') return c;
    const k = String(c);
    if (!this.colIds.has(k) && assign) this.colIds.set(k, this.colIds.size + 1);
    return this.colIds.get(k);
  }

  row(f: string, r: Name, assign: boolean): number | undefined {
    if (typeof r === 'boolean') return r ? 1 : 0;
    if (typeof r === 'number') return r;
    let m = this.rowIds.get(f);
    if (m === undefined) this.rowIds.set(f, (m = new Map()));
    if (!m.has(r) && assign) m.set(r, m.size + 1);
    return m.get(r);
  }

  colKey(id: number): string {
    for (const [k, v] of this.colIds) if (v === id) return k;
    return '';
  }

  rowKey(f: string, id: number): string {
    for (const [k, v] of this.rowIds.get(f) ?? []) if (v === id) return k;
    return '';
  }

  // --- writes (each returns Set/Clear's `changed`) ----------------------------------------------

  stdRows(f: string): Map<number, Cols> {
    let m = this.std.get(f);
    if (m === undefined) this.std.set(f, (m = new Map()));
    return m;
  }

  set(f: string, col: number, row: number, ts: number | undefined): boolean {
    const spec = this.field(f);
    if (this.schema.exists) this.exists.add(col);
    let changed = false;
    const rows = this.stdRows(f);
    if (spec.type === 'mutex' || spec.type === 'bool') {
      for (const [r, cols] of rows) if (r !== row && cols.delete(col)) changed = true;
    }
    if (spec.type !== 'time' || !spec.noStd) changed = add(rows, row, col) || changed;
    if (spec.type === 'time' && ts !== undefined) {
      let byRow = this.timed.get(f);
      if (byRow === undefined) this.timed.set(f, (byRow = new Map()));
      let byCol = byRow.get(row);
      if (byCol === undefined) byRow.set(row, (byCol = new Map()));
      let views = byCol.get(col);
      if (views === undefined) byCol.set(col, (views = new Set()));
      for (const v of viewsForTimestamp(ts, spec.quantum)) {
        if (!views.has(v)) changed = true;
        views.add(v);
      }
    }
    return changed;
  }

  setValue(f: string, col: number, v: bigint): boolean {
    if (this.schema.exists) this.exists.add(col);
    let m = this.values.get(f);
    if (m === undefined) this.values.set(f, (m = new Map()));
    const changed = m.get(col) !== v;
    m.set(col, v);
    return changed;
  }

  clear(f: string, col: number | undefined, row: number | undefined): boolean {
    if (col === undefined || row === undefined || this.field(f).type === 'int') return false;
    let changed = this.std.get(f)?.get(row)?.delete(col) ?? false;
    const views = this.timed.get(f)?.get(row)?.get(col);
    if (views !== undefined && views.size > 0) changed = true;
    this.timed.get(f)?.get(row)?.delete(col);
    return changed;
  }

  clearRow(f: string, row: number | undefined): boolean {
    if (row === undefined) return false;
    const std = this.std.get(f)?.get(row);
    const timed = this.timed.get(f)?.get(row);
    const changed = (std !== undefined && std.size > 0) || (timed !== undefined && timed.size > 0);
    this.std.get(f)?.delete(row);
    this.timed.get(f)?.delete(row);
    return changed;
  }

  store(f: string, row: number, cols: Cols): boolean {
    const rows = this.stdRows(f);
    const old = rows.get(row) ?? new Set();
    const changed = old.size !== cols.size || [...cols].some((c) => !old.has(c));
    rows.set(row, new Set(cols));
    return changed;
  }

  // --- reads ------------------------------------------------------------------------------------

  eval(e: Expr): Cols {
    switch (e.k) {
      case 'row': {
        const r = this.row(e.f, e.r, false);
        return new Set(r === undefined ? [] : (this.std.get(e.f)?.get(r) ?? []));
      }
      case 'time':
        return this.timeRow(e);
      case 'cmp':
      case 'between':
      case 'notNull': {
        const out: Cols = new Set();
        for (const [c, v] of this.values.get(e.f) ?? []) if (test(e, v)) out.add(c);
        return out;
      }
      case 'nary': {
        const sets = e.kids.map((k) => this.eval(k));
        if (sets.length === 0) return new Set();
        return sets.slice(1).reduce((acc, s) => combine(e.op, acc, s), sets[0]);
      }
      case 'not': {
        const kid = this.eval(e.kid);
        return new Set([...this.exists].filter((c) => !kid.has(c)));
      }
      case 'shift':
        return new Set([...this.eval(e.kid)].map((c) => c + e.n));
    }
  }

  private timeRow(e: Extract<Expr, { k: 'time' }>): Cols {
    const spec = this.field(e.f);
    const r = this.row(e.f, e.r, false);
    const byCol = r === undefined ? undefined : this.timed.get(e.f)?.get(r);
    if (spec.type !== 'time' || byCol === undefined) return new Set();
    const window = this.window(e.f);
    if (window === undefined) return new Set();
    const views = new Set(viewsByTimeRange(e.from ?? ZERO_TIME, e.to ?? addDays(this.now, 1), spec.quantum, window));
    const out: Cols = new Set();
    for (const [c, vs] of byCol) if ([...vs].some((v) => views.has(v))) out.add(c);
    return out;
  }

  /** Every time view that ever held a bit of the field covers data within this window. */
  private window(f: string): TimeWindow | undefined {
    let from = Infinity;
    let to = -Infinity;
    for (const byCol of this.timed.get(f)?.values() ?? []) {
      for (const vs of byCol.values()) {
        for (const v of vs) {
          const p = viewPeriod(v);
          if (p === undefined) continue;
          from = Math.min(from, p.start);
          to = Math.max(to, p.end);
        }
      }
    }
    return from < to ? { from, to } : undefined;
  }

  /** Rows with a bit in the standard view (time fields without one: in any time view). */
  rowsWithBits(f: string): number[] {
    const spec = this.field(f);
    const src = spec.type === 'time' && spec.noStd ? this.timed.get(f) : this.std.get(f);
    const out: number[] = [];
    for (const [r, cols] of src ?? []) if (cols.size > 0) out.push(r);
    return out.sort((a, b) => a - b);
  }

  stdRow(f: string, r: number): Cols {
    return this.std.get(f)?.get(r) ?? new Set();
  }
}

function add(rows: Map<number, Cols>, row: number, col: number): boolean {
  let s = rows.get(row);
  if (s === undefined) rows.set(row, (s = new Set()));
  if (s.has(col)) return false;
  s.add(col);
  return true;
}

function test(e: Extract<Expr, { k: 'cmp' | 'between' | 'notNull' }>, v: bigint): boolean {
  if (e.k === 'notNull') return true;
  if (e.k === 'between') return v >= e.lo && v <= e.hi;
  switch (e.op) {
    case '==':
      return v === e.v;
    case '!=':
      return v !== e.v;
    case '<':
      return v < e.v;
    case '<=':
      return v <= e.v;
    case '>':
      return v > e.v;
    case '>=':
      return v >= e.v;
  }
}

function combine(op: 'Union' | 'Intersect' | 'Difference' | 'Xor', a: Cols, b: Cols): Cols {
  switch (op) {
    case 'Union':
      return new Set([...a, ...b]);
    case 'Intersect':
      return new Set([...a].filter((c) => b.has(c)));
    case 'Difference':
      return new Set([...a].filter((c) => !b.has(c)));
    case 'Xor':
      return new Set([...[...a].filter((c) => !b.has(c)), ...[...b].filter((c) => !a.has(c))]);
  }
}

export const shardOfCol = (c: number): number => Math.floor(c / SHARD_WIDTH);
