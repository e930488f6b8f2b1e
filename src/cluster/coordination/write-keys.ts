// Small helpers of the write coordinators: which keys still need IDs (only those go through the
// meta topic), and the column attributes of several read runs as one answer.
import type { ColumnAttrSet } from '../../executor/result.js';
import type { ReadonlyIndex } from '../../state/readonly.js';

/** The keys without an ID yet, each once, in order of first appearance; undefined when none. */
export function missingKeys(
  index: ReadonlyIndex,
  wanted: { columns: readonly string[]; rows: ReadonlyMap<string, readonly string[]> },
): { columns: string[]; rows: { field: string; keys: string[] }[] } | undefined {
  const columns = unknown(wanted.columns, (k) => index.columnKeys.id(k) !== undefined);
  const rows: { field: string; keys: string[] }[] = [];
  for (const [field, keys] of wanted.rows) {
    const t = index.rowKeys.get(field);
    const missing = unknown(keys, (k) => t?.id(k) !== undefined);
    if (missing.length > 0) rows.push({ field, keys: missing });
  }
  return columns.length === 0 && rows.length === 0 ? undefined : { columns, rows };
}

function unknown(keys: readonly string[], known: (k: string) => boolean): string[] {
  const out = new Set<string>();
  for (const k of keys) if (!known(k)) out.add(k);
  return [...out];
}

/** Column attribute sets of several answers, each column once (the first answer's wins). */
export function mergeColumnAttrs(
  a: ColumnAttrSet[] | undefined,
  b: ColumnAttrSet[] | undefined,
): ColumnAttrSet[] | undefined {
  if (b === undefined || b.length === 0) return a;
  if (a === undefined) return b;
  const seen = new Set(a.map((s) => (s.key !== undefined ? `k:${s.key}` : `i:${s.id}`)));
  return [...a, ...b.filter((s) => !seen.has(s.key !== undefined ? `k:${s.key}` : `i:${s.id}`))];
}
