// Legacy (0.5–0.10) bulk import: POST /import and POST /import-value name the frame (and slice)
// in the protobuf body instead of the path. ImportRequest's field numbers are those of 1.x
// (Frame = 2 where 1.x has Field, Slice = 3 for Shard); ImportValueRequest adds the frame's int
// field as Field = 4, which maps to the int field `<frame>_<field>`.
import type { FastifyInstance, FastifyReply } from 'fastify';
import protobuf from 'protobufjs';
import { DomainError, badRequest } from '../../domain/errors.js';
import { decodeImportRequest, decodeImportValueRequest } from '../../encoding/import-request.js';
import { resolveIntField } from '../../service/legacy/legacy-meta.js';
import { bodyBuffer, isProtobuf } from '../body.js';
import type { HttpContext } from '../context.js';

export function legacyImportRoutes(app: FastifyInstance, ctx: HttpContext): void {
  app.post('/import', async (req, reply) => {
    checkHeaders(req.headers['content-type'], req.headers.accept);
    const b = decodeImportRequest(bodyBuffer(req.body));
    if (b.index === '' || b.field === '') throw badRequest('index and frame are required');
    await ctx.imports.importBits({ index: b.index, field: b.field, shard: b.shard, rowIds: b.rowIds, columnIds: b.columnIds, timestamps: b.timestamps, rowKeys: b.rowKeys, columnKeys: b.columnKeys, clear: false });
    return done(reply);
  });

  app.post('/import-value', async (req, reply) => {
    checkHeaders(req.headers['content-type'], req.headers.accept);
    const buf = bodyBuffer(req.body);
    const v = decodeImportValueRequest(buf);
    const name = frameFieldName(buf);
    if (v.index === '' || v.field === '' || name === '') throw badRequest('index, frame and field are required');
    // Naming only (a synchronous look at the state); importValues validates against it again.
    const field = ctx.engine.peekApplied((h) => {
      const idx = h.index(v.index);
      return idx === undefined ? name : resolveIntField(idx, v.field, name);
    });
    await ctx.imports.importValues({ index: v.index, field, shard: v.shard, columnIds: v.columnIds, values: v.values, columnKeys: v.columnKeys, clear: false });
    return done(reply);
  });
}

function checkHeaders(contentType: string | undefined, accept: string | undefined): void {
  if (!isProtobuf(contentType)) throw new DomainError('unsupported_media', 'Unsupported media type');
  if (accept !== undefined && accept !== '' && !/application\/(x-)?protobuf|\*\/\*/i.test(accept)) throw new DomainError('not_acceptable', 'Not acceptable');
}

/** 0.x answered a serialized empty ImportResponse: zero bytes. */
function done(reply: FastifyReply): FastifyReply {
  return reply.code(200).type('application/x-protobuf').send(Buffer.alloc(0));
}

/** Field 4 (string) of a 0.x ImportValueRequest: the frame's int field. */
function frameFieldName(buf: Uint8Array): string {
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
