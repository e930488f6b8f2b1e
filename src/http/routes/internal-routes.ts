// Internal endpoints Pilosa client libraries call: key translation, shard owners, max shards.
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/errors.js';
import { argumentRequired, notValidArgument } from '../../domain/messages.js';
import { parseShard } from '../../domain/shard.js';
import { decodeTranslateKeysRequest, encodeTranslateKeysResponse } from '../../encoding/public-proto.js';
import { bodyBuffer, isProtobuf } from '../body.js';
import type { HttpContext } from '../context.js';
import { sendJson } from '../reply.js';

type Query = Record<string, string>;

export function internalRoutes(app: FastifyInstance, ctx: HttpContext): void {
  const keys = ctx.topology.keys;
  // TranslateKeysRequest → TranslateKeysResponse; unknown keys get new IDs (one KeysAssigned).
  app.post('/internal/translate/keys', async (req, reply) => {
    if (!isProtobuf(req.headers['content-type'])) throw new DomainError('unsupported_media', 'Unsupported media type');
    if (!acceptsProtobuf(req.headers.accept)) throw new DomainError('not_acceptable', 'Not acceptable');
    const r = decodeTranslateKeysRequest(bodyBuffer(req.body));
    const ids = await keys.translate(r.index, r.field, r.keys);
    return reply
      .code(200)
      .type('application/x-protobuf')
      .send(Buffer.from(encodeTranslateKeysResponse(ids)));
  });

  // The owners of a shard: this node, or in cluster mode the nodes holding its partition.
  app.get<{ Querystring: Query }>(
    '/internal/fragment/nodes',
    { config: { errorShape: 'query' } },
    async (req, reply) => {
      checkArgs(req.query, ['index', 'shard'], []);
      const shard = parseShard(req.query.shard);
      return sendJson(reply, ctx.topology.shardNodes(req.query.index, shard));
    },
  );

  // Pilosa registers this route's validator under a misspelt name: any argument is accepted.
  app.get('/internal/shards/max', async (req, reply) => {
    const q = req.query as Record<string, string | undefined>;
    const r = await ctx.topology.shardsMax(q);
    // A member (?local=true) also gets the inverse maxima (0.x /slices/max); clients Pilosa's shape.
    return sendJson(reply, q.local === 'true' ? r : { standard: r.standard });
  });
}

/** Pilosa's query-argument validator: unknown → "x is not a valid argument", missing → "x is required". */
export function checkArgs(q: Query, required: string[], optional: string[]): void {
  for (const k of Object.keys(q)) if (!required.includes(k) && !optional.includes(k)) throw notValidArgument(k);
  for (const k of required) if (q[k] === undefined || q[k] === '') throw argumentRequired(k);
}

/** No Accept header, a wildcard, or protobuf (Pilosa clients send application/x-protobuf). */
function acceptsProtobuf(accept: string | undefined): boolean {
  return accept === undefined || accept === '' || /application\/(x-)?protobuf|\*\/\*/i.test(accept);
}
