// Event ⇄ (type byte, protobuf payload). The type byte and the message schema together form the
// log format; each event type's code and codec are its entry in the registry (events/registry.ts).
import { AssertionError } from '../util/assert.js';
import { KIND_BY_CODE, kindOf } from './registry.js';
import type { Event } from './types.js';

export { EVENT_TYPE_CODES } from './registry.js';
export { deserializeBitmap, serializeBitmap } from './proto-fields.js';

/**
 * The record format this build writes; it reads every version up to it. 2: Bits rows of a few
 * offsets may be plain varints (proto/log/events.proto fields 8, 9; migrations/0002).
 */
export const LOG_FORMAT_VERSION = 2;

export interface EncodedEvent {
  type: number;
  payload: Uint8Array;
}

export function encodeEvent(e: Event): EncodedEvent {
  const kind = kindOf(e.type);
  return { type: kind.code, payload: kind.encode(e) };
}

/**
 * `reuse` (replay only): Bits and Values events may carry scratch arrays that the next decode
 * overwrites, so each event must be applied before the next is decoded.
 */
export function decodeEvent(type: number, payload: Uint8Array, reuse = false): Event {
  const kind = KIND_BY_CODE.get(type);
  if (kind === undefined) throw new AssertionError(`unknown event type code ${type}`);
  return kind.decode(payload, reuse);
}
