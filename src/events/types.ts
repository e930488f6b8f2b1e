// The event union: past-tense facts, each carrying everything apply() needs (assigned IDs,
// resolved views and shards). apply() has no clock, no randomness and no validation. Each
// family's events are declared, with their registry entries, in a file of events/kinds/.
import type { BitsEvent } from './kinds/bits.js';
import type { IngestEvent } from './kinds/ingest.js';
import type { KeyAttrEvent } from './kinds/keys-attrs.js';
import type { MetaEvent } from './kinds/meta.js';
import type { SchemaEvent } from './kinds/schema.js';
import type { ValuesEvent } from './kinds/values.js';

export type { BitDelta } from './bits-encode.js';

export type Event = SchemaEvent | BitsEvent | ValuesEvent | KeyAttrEvent | IngestEvent | MetaEvent;

export type EventType = Event['type'];

export type EventOf<K extends EventType> = Extract<Event, { type: K }>;

/**
 * Where write deciders put their events. The engine's implementation applies each event to the
 * state at once (so later calls of the same request see it) and stages it for the log; the
 * request is acknowledged only after the staged group is durable.
 */
export interface EventSink {
  emit(event: Event): void;
}
