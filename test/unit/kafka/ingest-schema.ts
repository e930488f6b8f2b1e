// The schema the ingest unit tests map into, built through apply() like any state.
import { defaultFieldOptions, type FieldOptions, type FieldType } from '../../../src/domain/types.js';
import type { Event } from '../../../src/events/types.js';
import { apply } from '../../../src/events/apply.js';
import { Holder } from '../../../src/state/holder.js';

/** Index i (integer columns) and k (string keys) with one field of each kind. */
export function ingestSchema(): Holder {
  const h = new Holder();
  const field = (index: string, name: string, type: FieldType, extra: Partial<FieldOptions> = {}): Event => ({
    type: 'FieldCreated',
    index,
    field: name,
    options: { ...defaultFieldOptions(type), ...(type === 'time' ? { timeQuantum: 'YMD' } : {}), ...extra },
  });
  const events: Event[] = [
    { type: 'IndexCreated', index: 'i', options: { keys: false, trackExistence: true } },
    { type: 'IndexCreated', index: 'k', options: { keys: true, trackExistence: true } },
  ];
  for (const index of ['i', 'k']) {
    events.push(
      field(index, 'color', 'set'),
      field(index, 'tag', 'set', { keys: true }),
      field(index, 'grp', 'mutex'),
      field(index, 'flag', 'bool'),
      field(index, 'cat', 'time'),
      field(index, 'age', 'int', { min: 0n, max: 150n }),
      field(index, 'big', 'int'),
    );
  }
  for (const e of events) apply(h, e);
  return h;
}
