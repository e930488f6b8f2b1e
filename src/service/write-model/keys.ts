// Bulk key → ID translation for writes: known keys resolve from the translator, unknown ones get
// the next sequential IDs in ONE KeysAssigned event (decided here, so replay never renumbers).
// Shared by imports and PQL writes.
import type { EventSink } from '../../events/types.js';
import type { KeyTranslator } from '../../state/keys.js';

/**
 * `t` is undefined until the first key of a field is assigned (only apply() creates it), and
 * then counts as empty: IDs start at 1.
 */
export function assignKeys(t: KeyTranslator | undefined, keys: readonly string[], sink: EventSink, index: string, field: string): Float64Array {
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
