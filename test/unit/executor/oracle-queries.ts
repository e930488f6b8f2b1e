// Writes and queries of the differential test: how each renders as PQL, and the result the
// naive Oracle expects, in the JSON shapes of harness.toJson.
import { num } from './harness.js';
import type { Expr, Name, Oracle, Schema } from './query-oracle.js';
import { shardOfCol } from './query-oracle.js';

export type Write =
  | { k: 'set'; f: string; col: Name; row: Name; ts: number | undefined }
  | { k: 'setValue'; f: string; col: Name; v: bigint }
  | { k: 'clear'; f: string; col: Name; row: Name }
  | { k: 'clearRow'; f: string; row: Name };

export type Query =
  | { k: 'bitmap'; e: Expr }
  | { k: 'count'; e: Expr }
  | { k: 'valCount'; op: 'Sum' | 'Min' | 'Max'; e?: Expr }
  | { k: 'topN'; f: string; e?: Expr; n: number; threshold: number }
  | { k: 'rows'; f: string; previous?: Name; limit?: number; column?: Name }
  | { k: 'groupBy'; fs: string[]; e?: Expr; limit?: number; offset?: number }
  | { k: 'minMaxRow'; op: 'MinRow' | 'MaxRow'; f: string; e?: Expr }
  | { k: 'store'; target: Name; e: Expr };

const name = (n: Name): string => (typeof n === 'string' ? JSON.stringify(n) : String(n));
const ts = (t: number): string => new Date(t).toISOString().slice(0, 16);

export function renderWrite(_s: Schema, w: Write): string {
  switch (w.k) {
    case 'set':
      return `Set(${name(w.col)}, ${w.f}=${name(w.row)}${w.ts === undefined ? '' : `, ${ts(w.ts)}`})`;
    case 'setValue':
      return `Set(${name(w.col)}, ${w.f}=${w.v})`;
    case 'clear':
      return `Clear(${name(w.col)}, ${w.f}=${name(w.row)})`;
    case 'clearRow':
      return `ClearRow(${w.f}=${name(w.row)})`;
  }
}

export function renderExpr(e: Expr): string {
  switch (e.k) {
    case 'row':
      return `Row(${e.f}=${name(e.r)})`;
    case 'time':
      // Range() without bounds reads every time view (Row() would read the standard view).
      if (e.from === undefined && e.to === undefined) return `Range(${e.f}=${name(e.r)})`;
      return `Row(${e.f}=${name(e.r)}${e.from === undefined ? '' : `, from=${ts(e.from)}`}${e.to === undefined ? '' : `, to=${ts(e.to)}`})`;
    case 'cmp':
      return `Row(${e.f} ${e.op} ${e.v})`;
    case 'between':
      return `Row(${e.f} >< [${e.lo}, ${e.hi}])`;
    case 'notNull':
      return `Row(${e.f} != null)`;
    case 'nary':
      return `${e.op}(${e.kids.map(renderExpr).join(', ')})`;
    case 'not':
      return `Not(${renderExpr(e.kid)})`;
    case 'shift':
      return `Shift(${renderExpr(e.kid)}, n=${e.n})`;
  }
}

const pre = (e: Expr | undefined): string => (e === undefined ? '' : `${renderExpr(e)}, `);

export function renderQuery(_s: Schema, q: Query): string {
  switch (q.k) {
    case 'bitmap':
      return renderExpr(q.e);
    case 'count':
      return `Count(${renderExpr(q.e)})`;
    case 'valCount':
      return `${q.op}(${pre(q.e)}field=n)`;
    case 'topN':
      return `TopN(${q.f}, ${pre(q.e)}n=${q.n}${q.threshold > 0 ? `, threshold=${q.threshold}` : ''})`;
    case 'rows': {
      const args = [q.f];
      if (q.previous !== undefined) args.push(`previous=${name(q.previous)}`);
      if (q.limit !== undefined) args.push(`limit=${q.limit}`);
      if (q.column !== undefined) args.push(`column=${name(q.column)}`);
      return `Rows(${args.join(', ')})`;
    }
    case 'groupBy': {
      const args = q.fs.map((f) => `Rows(${f})`);
      if (q.limit !== undefined) args.push(`limit=${q.limit}`);
      if (q.offset !== undefined) args.push(`offset=${q.offset}`);
      if (q.e !== undefined) args.push(`filter=${renderExpr(q.e)}`);
      return `GroupBy(${args.join(', ')})`;
    }
    case 'minMaxRow':
      return `${q.op}(${pre(q.e)}field=${q.f})`;
    case 'store':
      return `Store(${renderExpr(q.e)}, s1=${name(q.target)})`;
  }
}

const asc = (a: number, b: number): number => a - b;
const inter = (a: Set<number>, b: Set<number> | undefined): number =>
  b === undefined ? a.size : [...a].filter((c) => b.has(c)).length;

/** What the server must answer (mutating the model for Store). */
export function expected(m: Oracle, q: Query): unknown {
  const keyed = (f: string): boolean => m.field(f).keys && m.field(f).type !== 'bool';
  const filter = 'e' in q && q.e !== undefined ? m.eval(q.e) : undefined;
  switch (q.k) {
    case 'bitmap': {
      const cols = [...m.eval(q.e)].sort(asc);
      if (!m.schema.keys) return { attrs: {}, columns: cols };
      return cols.length > 0
        ? { attrs: {}, columns: [], keys: cols.map((c) => m.colKey(c)) }
        : { attrs: {}, columns: [] };
    }
    case 'count':
      return m.eval(q.e).size;
    case 'valCount': {
      const vals = [...(m.values.get('n') ?? [])]
        .filter(([c]) => filter === undefined || filter.has(c))
        .map(([, v]) => v);
      if (vals.length === 0) return { value: 0, count: 0 };
      if (q.op === 'Sum') return { value: num(vals.reduce((a, b) => a + b, 0n)), count: vals.length };
      const best = vals.reduce((a, b) => ((q.op === 'Min' ? b < a : b > a) ? b : a));
      return { value: num(best), count: vals.filter((v) => v === best).length };
    }
    case 'topN': {
      const thr = q.threshold === 0 ? 1 : q.threshold;
      let pairs: { id: number; count: number }[] = [];
      for (const r of m.rowsWithBits(q.f)) {
        const perShard = new Map<number, number>();
        for (const c of m.stdRow(q.f, r))
          if (filter === undefined || filter.has(c))
            perShard.set(shardOfCol(c), (perShard.get(shardOfCol(c)) ?? 0) + 1);
        const count = [...perShard.values()].filter((n) => n >= thr).reduce((a, b) => a + b, 0);
        if (count > 0) pairs.push({ id: r, count });
      }
      pairs.sort((a, b) => b.count - a.count || a.id - b.id);
      if (q.n > 0) pairs = pairs.slice(0, q.n);
      return keyed(q.f) ? pairs.map((p) => ({ id: 0, key: m.rowKey(q.f, p.id), count: p.count })) : pairs;
    }
    case 'rows': {
      let start = 0;
      if (q.previous !== undefined) start = (m.row(q.f, q.previous, false) ?? (m.rowIds.get(q.f)?.size ?? 0) + 1) + 1;
      let rows = m.rowsWithBits(q.f).filter((r) => r >= start);
      if (q.column !== undefined) {
        const col = m.col(q.column, false);
        rows = col === undefined ? [] : rows.filter((r) => m.stdRow(q.f, r).has(col));
      }
      if (q.limit !== undefined) rows = rows.slice(0, q.limit);
      if (!keyed(q.f)) return { rows };
      return rows.length > 0 ? { rows: null, keys: rows.map((r) => m.rowKey(q.f, r)) } : { rows: null };
    }
    case 'groupBy': {
      const groups: { group: unknown[]; count: number }[] = [];
      const visit = (i: number, ids: number[], cols: Set<number> | undefined): void => {
        if (i === q.fs.length) {
          if (cols !== undefined && cols.size > 0) {
            const group = ids.map((id, j) =>
              keyed(q.fs[j]) ? { field: q.fs[j], rowKey: m.rowKey(q.fs[j], id) } : { field: q.fs[j], rowID: id },
            );
            groups.push({ group, count: cols.size });
          }
          return;
        }
        for (const r of m.rowsWithBits(q.fs[i])) {
          const row = m.stdRow(q.fs[i], r);
          const base = cols ?? filter;
          visit(i + 1, [...ids, r], new Set([...row].filter((c) => base === undefined || base.has(c))));
        }
      };
      visit(0, [], undefined);
      const offset = q.offset ?? 0;
      return groups.slice(offset, q.limit === undefined ? undefined : offset + q.limit);
    }
    case 'minMaxRow': {
      const rows = m.rowsWithBits(q.f);
      if (q.op === 'MaxRow') rows.reverse();
      for (const r of rows) {
        const count = filter === undefined ? 1 : inter(m.stdRow(q.f, r), filter);
        if (count === 0) continue;
        return keyed(q.f) ? { id: r, key: m.rowKey(q.f, r), count } : { id: r, count };
      }
      return { id: 0, count: 0 };
    }
    case 'store':
      return m.store('s1', m.row('s1', q.target, true) as number, m.eval(q.e));
  }
}
