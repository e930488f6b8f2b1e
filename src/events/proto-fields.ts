// The protobuf side of the record codecs (events/kinds/): the log's message types
// (proto/log/events.proto) and the coercions of protobufjs's decoded objects into event fields.
import protobuf from 'protobufjs';
import { RoaringBitmap32, type Bitmap } from '../roaring/bitmap.js';
import { protoPath } from '../util/proto-path.js';

const root = protobuf.loadSync(protoPath(import.meta.url, 'log/events.proto'));

/** A message type of the log's schema, by its name in proto/log/events.proto. */
export const message = (name: string): protobuf.Type => root.lookupType(`bitledger.log.${name}`);

export function obj(type: protobuf.Type, payload: Uint8Array): Record<string, unknown> {
  return type.decode(payload) as unknown as Record<string, unknown>;
}
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
export const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v ?? 0));
export const nums = (v: unknown): number[] => ((v ?? []) as unknown[]).map(num);
export const strs = (v: unknown): string[] => ((v ?? []) as unknown[]).map(str);
export const bytesList = (v: unknown): Uint8Array[] => (v ?? []) as Uint8Array[];

export function bytesOf(a: Uint32Array | BigInt64Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

export const serializeBitmap = (b: Bitmap): Uint8Array => b.serialize('portable');
export const deserializeBitmap = (buf: Uint8Array): Bitmap => RoaringBitmap32.deserialize(buf, 'portable');
