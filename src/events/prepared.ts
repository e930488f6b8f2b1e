// An event encoded ahead of its write: large imports build and encode their events off to the
// side (yielding between pieces, nothing visible), then commit them in one short step
// (Engine.commit with `prepared`). Only PreparedEvent.of() makes one, so the record is always exactly
// encodeEvent(event): what is logged and what is applied cannot differ.
import { type EncodedEvent, encodeEvent } from './codec.js';
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
}
