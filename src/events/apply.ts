// apply(): the only function that changes state. Used by live writes, crash recovery, snapshot
// replay, point-in-time restore and replicas alike. No clock, no I/O, no validation: every event
// was decided against the state it is applied to, so a mismatch is a broken invariant. Each event
// type's change is the `apply` of its registry entry (events/kinds/), beside its shape and codec.
import type { Holder } from '../state/holder.js';
import type { EventKind } from './kind.js';
import { EVENT_KINDS } from './registry.js';
import type { Event } from './types.js';

export function apply(holder: Holder, event: Event): void {
  (EVENT_KINDS[event.type] as unknown as EventKind<Event>).apply(holder, event);
}
