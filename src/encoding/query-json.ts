// Query results → Pilosa JSON shapes (docs/API.md §3.3). Legacy (0.x) requests name a row's
// columns `bits` instead of `columns`.
import type { AttrMap } from '../domain/types.js';
import type { QueryResponse, QueryResult } from '../executor/result.js';
import type { Jsonish } from './json.js';
import { setOwn } from '../util/own-property.js';

/** `calls`: the top-level call names, when known (0.x: Sum answers `sum`, Min/Max `value`). */
export function queryResponseJson(resp: QueryResponse, legacy = false, calls?: readonly string[]): Jsonish {
  const out: { [k: string]: Jsonish } = {
    results: resp.results.map((r, i) => resultJson(r, legacy, legacy && (calls === undefined || calls[i] === 'Sum'))),
  };
  const attrs = columnAttrsJson(resp);
  if (attrs !== undefined) out.columnAttrs = attrs;
  return out;
}

/** The response's columnAttrs, when there are any. */
export function columnAttrsJson(resp: QueryResponse): Jsonish[] | undefined {
  if (resp.columnAttrs === undefined || resp.columnAttrs.length === 0) return undefined;
  return resp.columnAttrs.map((c) =>
    c.key !== undefined ? { key: c.key, attrs: attrsJson(c.attrs) } : { id: c.id, attrs: attrsJson(c.attrs) },
  );
}

/** `legacy`: 0.x names (`bits` for a row's columns); `sumShape`: a value named `sum` (0.x Sum). */
export function resultJson(r: QueryResult, legacy: boolean, sumShape = legacy): Jsonish {
  switch (r.type) {
    case 'row': {
      const columns = Array.isArray(r.columns) ? r.columns : r.columns.toArray();
      const o: { [k: string]: Jsonish } = { attrs: attrsJson(r.attrs), [legacy ? 'bits' : 'columns']: columns };
      if (r.keys !== undefined && r.keys.length > 0) o.keys = r.keys;
      return o;
    }
    case 'count':
      return r.n;
    case 'changed':
      return r.changed;
    case 'pairs':
      return r.pairs.map(pairJson);
    case 'valcount':
      return sumShape ? { sum: r.value, count: r.count } : { value: r.value, count: r.count };
    case 'null':
      return null;
    case 'groupcounts':
      return r.groups.map((g) => ({
        group: g.group.map((fr) =>
          fr.rowKey !== undefined ? { field: fr.field, rowKey: fr.rowKey } : { field: fr.field, rowID: fr.rowID },
        ),
        count: g.count,
      }));
    case 'rowids':
      return r.keys !== undefined
        ? r.keys.length > 0
          ? { rows: null, keys: r.keys }
          : { rows: null }
        : { rows: r.rows };
    case 'pair':
      return pairJson(r.pair);
  }
}

function pairJson(p: { id: number; key?: string; count: number }): Jsonish {
  return p.key !== undefined ? { id: p.id, key: p.key, count: p.count } : { id: p.id, count: p.count };
}

/** Attribute maps with sorted keys, as Pilosa emits them. */
export function attrsJson(attrs: AttrMap): Jsonish {
  const out: { [k: string]: Jsonish } = {};
  for (const k of Object.keys(attrs).sort()) setOwn(out, k, attrs[k]);
  return out;
}
