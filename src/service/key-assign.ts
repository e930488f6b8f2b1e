// Bulk key → ID translation for writes: known keys resolve from the translator, unknown ones get
// the next sequential IDs in ONE KeysAssigned event (decided here, so replay never renumbers).
import type { EventSink } from '../events/types.js';
import type { KeyTranslator } from '../state/keys.js';

export function assignKeys(t: KeyTranslator, keys: readonly string[], sink: EventSink, index: string, field: string): Float64Array {
  const ids = new Float64Array(keys.length);
  const fresh = new Map<string, number>();
  let next = t.nextId;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    let id = t.id(k) ?? fresh.get(k);
    if (id === undefined) {
      id = next++;
      fresh.set(k, id);
    }
    ids[i] = id;
  }
  if (fresh.size > 0) sink.emit({ type: 'KeysAssigned', index, field, firstId: t.nextId, keys: [...fresh.keys()] });
  return ids;
}
