// Request bodies arrive as Buffers (one parser for every content type, so curl's default
// form content type and Pilosa clients' text/plain both work); handlers decode what they need.

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
