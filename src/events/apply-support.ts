// What the apply() entries of events/kinds/ share: the index or field an event names, which
// must exist (every event was decided against the state it is applied to), and attribute patches.
import { assert } from '../util/assert.js';
import type { Field } from '../state/field.js';
import type { Holder } from '../state/holder.js';
import type { Index } from '../state/index-state.js';

export function indexOf(holder: Holder, name: string): Index {
  const index = holder.indexes.get(name);
  assert(index !== undefined, `apply: index ${name} missing`);
  return index;
}

export function fieldOf(holder: Holder, index: string, field: string): Field {
  const f = indexOf(holder, index).fields.get(field);
  assert(f !== undefined, `apply: field ${index}/${field} missing`);
  return f;
}

export function mergeAttrs<T>(
  current: Record<string, T> | undefined,
  patch: Record<string, T | null>,
): Record<string, T> {
  const out: Record<string, T> = { ...(current ?? {}) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}
