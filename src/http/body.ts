// Request bodies arrive as Buffers (one parser for every content type, so curl's default
// form content type and Pilosa clients' text/plain both work); handlers decode what they need.
import { DomainError, badRequest } from '../domain/errors.js';

export function bodyBuffer(body: unknown): Buffer {
  return Buffer.isBuffer(body) ? body : Buffer.alloc(0);
}

const TRUE = new Set(['true']);

export function boolArg(v: string | undefined): boolean {
  return v !== undefined && TRUE.has(v);
}

export function isProtobuf(contentType: string | undefined): boolean {
  return contentType !== undefined && /application\/(x-)?protobuf/i.test(contentType);
}

/** Pilosa clients ask for protobuf answers with Accept; JSON stays the default. */
export function wantsProtobuf(accept: string | undefined): boolean {
  return accept !== undefined && /application\/(x-)?protobuf/i.test(accept) && !/application\/json/i.test(accept);
}

/** The media type without parameters, lower case; '' when absent. */
function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase();
}

// curl's default (form) and Pilosa clients' text/plain carry JSON imports as well.
const JSON_IMPORT = new Set(['', 'application/json', 'text/plain', 'application/x-www-form-urlencoded']);
const PROTO_IMPORT = new Set(['application/x-protobuf', 'application/protobuf', 'application/octet-stream']);

/** How an import body is encoded, from its Content-Type; anything else is 415, as in Pilosa. */
export function importEncoding(contentType: string | undefined, jsonAllowed: boolean): 'json' | 'protobuf' {
  const t = mediaType(contentType);
  if (PROTO_IMPORT.has(t)) return 'protobuf';
  if (t === '' || (jsonAllowed && JSON_IMPORT.has(t)) || (!jsonAllowed && t === 'application/x-www-form-urlencoded'))
    return jsonAllowed ? 'json' : 'protobuf';
  const accepted = jsonAllowed ? 'application/x-protobuf or application/json' : 'application/x-protobuf';
  throw new DomainError('unsupported_media', `unsupported Content-Type for an import: ${t}; send ${accepted}`);
}

/** A log sequence (or other count) in a path or query argument: digits only, exact as a number. */
export function parseUint(v: string | undefined, what: string): number {
  if (v === undefined || !/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)))
    throw badRequest(`${what} should be an unsigned integer`);
  return Number(v);
}
