// Legacy (0.5–0.10) bulk import: POST /import and POST /import-value name the frame (and slice)
// in the protobuf body instead of the path. ImportRequest's field numbers are those of 1.x
// (Frame = 2 where 1.x has Field, Slice = 3 for Shard); ImportValueRequest adds the frame's int
// field as Field = 4, which maps to the int field `<frame>_<field>`.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { DomainError, badRequest } from '../../domain/errors.js';
import { checkShard } from '../../domain/shard.js';
import { decodeImportRequestAsync, decodeImportValueRequestAsync } from '../../encoding/import-request.js';
import { frameFieldName } from '../../encoding/legacy-import-value.js';
import { bodyBuffer, isProtobuf } from '../body.js';
import type { HttpContext } from '../context.js';

export function legacyImportRoutes(app: FastifyInstance, ctx: HttpContext): void {
  const legacy = ctx.topology.legacyImports;
  app.post('/import', async (req, reply) => {
    checkHeaders(req.headers['content-type'], req.headers.accept);
    const b = await decodeImportRequestAsync(bodyBuffer(req.body));
    if (b.index === '' || b.field === '') throw badRequest('index and frame are required');
    checkShard(b.shard, 'slice');
    await ctx.imports.importBits({ ...b, clear: false });
    return done(reply);
  });

  app.post('/import-value', async (req, reply) => {
    checkHeaders(req.headers['content-type'], req.headers.accept);
    const buf = bodyBuffer(req.body);
    const v = await decodeImportValueRequestAsync(buf);
    const name = frameFieldName(buf);
    if (v.index === '' || v.field === '' || name === '') throw badRequest('index, frame and field are required');
    checkShard(v.shard, 'slice');
    await legacy.importValues({ ...v, clear: false }, name);
    return done(reply);
  });
}

function checkHeaders(contentType: string | undefined, accept: string | undefined): void {
  if (!isProtobuf(contentType)) throw new DomainError('unsupported_media', 'Unsupported media type');
  if (accept !== undefined && accept !== '' && !/application\/(x-)?protobuf|\*\/\*/i.test(accept))
    throw new DomainError('not_acceptable', 'Not acceptable');
}

/** 0.x answered a serialized empty ImportResponse: zero bytes. */
function done(reply: FastifyReply): FastifyReply {
  return reply.code(200).type('application/x-protobuf').send(Buffer.alloc(0));
}
