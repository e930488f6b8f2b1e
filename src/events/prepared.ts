// An event encoded ahead of its write: large imports build and encode their events off to the
// side (yielding between pieces, nothing visible), then commit them in one short step
// (Engine.commit with `prepared`). Only PreparedEvent.of() makes one from an event, so the record is
// always exactly encodeEvent(event), and fromRecord() makes the event from the record (built on
// another thread): either way what is logged and what is applied cannot differ.
import { type EncodedEvent, decodeEvent, encodeEvent } from './codec.js';
import type { Event } from './types.js';

export class PreparedEvent {
  private constructor(
    readonly event: Event,
    readonly record: EncodedEvent,
  ) {}

  /**
   * Encodes `event` now. Its bitmaps must not change until it is applied: the caller gives them
   * up (the import's own row bitmaps, which apply() adopts).
   */
  static of(event: Event): PreparedEvent {
    return new PreparedEvent(event, encodeEvent(event));
  }

  /**
   * The event of a record encoded elsewhere (a worker thread built it: cluster/commands/
   * import-prepare-thread.ts), decoded here. Its bitmaps are fresh and nothing else holds them, so a
   * BitsSet's may be adopted.
   */
  static fromRecord(record: EncodedEvent): PreparedEvent {
    const event = decodeEvent(record.type, record.payload);
    return new PreparedEvent(event.type === 'BitsSet' ? { ...event, adopt: true } : event, record);
  }
}
