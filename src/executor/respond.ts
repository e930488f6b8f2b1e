// The response of a query: its calls' results, plus the attributes of the columns of row
// results when columnAttrs is on (by the request options or by an Options() call).
import type { ColumnId } from '../domain/shard.js';
import type { ColumnAttrSet, QueryResponse, QueryResult } from './result.js';
import type { CallOutput } from './run.js';
import type { ShardColumns } from './shard-columns.js';
import type { ReadonlyIndex } from '../state/readonly.js';

/** Results plus columnAttrs when requested (by the options or by Options()) and non-empty. */
export function respond(index: ReadonlyIndex, outputs: readonly CallOutput[], columnAttrs: boolean): QueryResponse {
  const results: QueryResult[] = new Array<QueryResult>(outputs.length);
  let attrsOn = columnAttrs;
  for (let i = 0; i < outputs.length; i++) {
    results[i] = outputs[i].result;
    if (outputs[i].columnAttrs === true) attrsOn = true;
  }
  if (!attrsOn) return { results };
  const sets = columnAttrSets(
    index,
    outputs.map((o) => o.columns ?? []),
  );
  return sets.length > 0 ? { results, columnAttrs: sets } : { results };
}

/** Attributes of the columns of all row results, by ascending ID (keys on a keyed index). */
export function columnAttrSets(
  index: ReadonlyIndex,
  columnLists: readonly (ColumnId[] | ShardColumns)[],
): ColumnAttrSet[] {
  if (index.columnAttrs.size === 0) return [];
  const ids = new Set<number>();
  // Attributes are set on columns up to 2^53−1 (SetColumnAttrs refuses larger): a bigint has none.
  for (const list of columnLists) {
    // A large row's pieces, not its iterator: a generator step per column is slow at 10M.
    const pieces = Array.isArray(list) ? [list] : list.pieces(65_536);
    for (const piece of pieces)
      for (const c of piece) if (typeof c === 'number' && index.columnAttrs.has(c)) ids.add(c);
  }
  return [...ids]
    .sort((a, b) => a - b)
    .map((id) => {
      const attrs = { ...index.columnAttrs.get(id) };
      return index.options.keys ? { key: index.columnKeys.key(id) ?? '', attrs } : { id, attrs };
    });
}
