// Snapshot body: the state's events (state/snapshot.ts) framed as type u8 | length u32 LE | payload.
import { decodeEvent, encodeEvent } from '../events/codec.js';
import type { Event } from '../events/types.js';
import type { Holder } from '../state/holder.js';
import { stateEvents } from '../state/snapshot.js';
import { AssertionError } from '../util/assert.js';

/** Encodes synchronously, so the body is the state at exactly one sequence. */
export function encodeSnapshot(holder: Holder): { chunks: Uint8Array[]; events: number; bytes: number } {
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let events = 0;
  for (const e of stateEvents(holder)) {
    const { type, payload } = encodeEvent(e);
    const head = new Uint8Array(5);
    head[0] = type;
    new DataView(head.buffer).setUint32(1, payload.byteLength, true);
    chunks.push(head, payload);
    bytes += 5 + payload.byteLength;
    events++;
  }
  return { chunks, events, bytes };
}

export function* decodeSnapshot(body: Uint8Array): Generator<Event> {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  let pos = 0;
  while (pos < body.byteLength) {
    if (pos + 5 > body.byteLength) throw new AssertionError(`snapshot body truncated at byte ${pos}`);
    const type = body[pos];
    const len = view.getUint32(pos + 1, true);
    pos += 5;
    if (pos + len > body.byteLength) throw new AssertionError(`snapshot record at byte ${pos} overruns the body`);
    yield decodeEvent(type, body.subarray(pos, pos + len));
    pos += len;
  }
}
