// Bulk key → ID translation for writes: known keys resolve from the translator, unknown ones get
// the next sequential IDs in ONE KeysAssigned event (decided here, so replay never renumbers).
// Shared by imports, PQL writes and /internal/translate/keys. A clear never assigns a key.
import type { IdArray } from '../../domain/id-array.js';
import type { EventSink } from '../../events/types.js';
import type { ReadonlyKeyTranslator } from '../../state/readonly.js';

/**
 * `t` is undefined until the first key of a field is assigned (only apply() creates it), and
 * then counts as empty: IDs start at 1.
 */
export function assignKeys(
  t: ReadonlyKeyTranslator | undefined,
  keys: readonly string[],
  sink: EventSink,
  index: string,
  field: string,
): Float64Array {
  const ids = new Float64Array(keys.length);
  const fresh = new Map<string, number>();
  const first = t?.nextId ?? 1;
  let next = first;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    let id = t?.id(k) ?? fresh.get(k);
    if (id === undefined) {
      id = next++;
      fresh.set(k, id);
    }
    ids[i] = id;
  }
  if (fresh.size > 0) sink.emit({ type: 'KeysAssigned', index, field, firstId: first, keys: [...fresh.keys()] });
  return ids;
}

/** Clears never assign: the IDs of known keys, -1 for a key never assigned (nothing to clear). */
export function knownKeyIds(t: ReadonlyKeyTranslator | undefined, keys: readonly string[]): Float64Array {
  const ids = new Float64Array(keys.length);
  for (let i = 0; i < keys.length; i++) ids[i] = t?.id(keys[i]) ?? -1;
  return ids;
}

/** The (row, column) pairs whose keys are both known (-1 marks an unknown key). */
export function knownPairs(rows: IdArray, cols: IdArray): [IdArray, IdArray] {
  let unknown = 0;
  for (let i = 0; i < rows.length; i++) if (rows[i] < 0 || cols[i] < 0) unknown++;
  if (unknown === 0) return [rows, cols];
  const r = new Float64Array(rows.length - unknown);
  const c = new Float64Array(rows.length - unknown);
  let j = 0;
  for (let i = 0; i < rows.length; i++) {
    if (rows[i] < 0 || cols[i] < 0) continue;
    r[j] = rows[i];
    c[j++] = cols[i];
  }
  return [r, c];
}
