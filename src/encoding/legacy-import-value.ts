// 0.x ImportValueRequest: the 1.x message plus the frame's int field as field 4 (a string),
// which the hand-written decoder of import-request.ts skips.
import protobuf from 'protobufjs';
import { badRequest } from '../domain/errors.js';

/** Field 4 (string) of a 0.x ImportValueRequest: the frame's int field. */
export function frameFieldName(buf: Uint8Array): string {
  try {
    const r = protobuf.Reader.create(buf);
    let name = '';
    while (r.pos < r.len) {
      const tag = r.uint32();
      if (tag >>> 3 === 4 && (tag & 7) === 2) name = r.string();
      else r.skipType(tag & 7);
    }
    return name;
  } catch (e) {
    throw badRequest(`unmarshaling import value request: proto: ${e instanceof Error ? e.message : String(e)}`);
  }
}
