// The event registry: one entry per event type (events/kind.ts), gathered from the family files
// of events/kinds/. The type says every event type has exactly one entry. Adding an event to a
// family is its shape and entry (code, codec, apply, roles) in that family's file and its message
// in proto/log/events.proto. A new family is also one line here and one in events/types.ts.
import { AssertionError } from '../util/assert.js';
import type { EventKind, EventKinds } from './kind.js';
import { BITS_EVENTS } from './kinds/bits.js';
import { INGEST_EVENTS } from './kinds/ingest.js';
import { KEY_ATTR_EVENTS } from './kinds/keys-attrs.js';
import { META_EVENTS } from './kinds/meta.js';
import { SCHEMA_EVENTS } from './kinds/schema.js';
import { VALUES_EVENTS } from './kinds/values.js';
import type { Event, EventType } from './types.js';

export const EVENT_KINDS: EventKinds<Event> = {
  ...SCHEMA_EVENTS,
  ...BITS_EVENTS,
  ...VALUES_EVENTS,
  ...KEY_ATTR_EVENTS,
  ...INGEST_EVENTS,
  ...META_EVENTS,
};

/** An entry of any type, for the codec's dispatch (the table pairs each type with its entry). */
export const kindOf = (type: EventType): EventKind<Event> => EVENT_KINDS[type] as unknown as EventKind<Event>;

/** Type byte → entry; a code given twice is a programming error caught at load. */
export const KIND_BY_CODE: ReadonlyMap<number, EventKind<Event>> = (() => {
  const byCode = new Map<number, EventKind<Event>>();
  for (const type of Object.keys(EVENT_KINDS) as EventType[]) {
    const kind = kindOf(type);
    if (byCode.has(kind.code)) throw new AssertionError(`event type code ${kind.code} given twice`);
    byCode.set(kind.code, kind);
  }
  return byCode;
})();

export const EVENT_TYPE_CODES: Readonly<Record<EventType, number>> = Object.fromEntries(
  (Object.keys(EVENT_KINDS) as EventType[]).map((type) => [type, EVENT_KINDS[type].code]),
) as Record<EventType, number>;
