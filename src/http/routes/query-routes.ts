// POST /index/{i}/query: PQL text or protobuf QueryRequest in; JSON or protobuf out.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { DomainError, badRequest } from '../../domain/errors.js';
import type { QueryOptions } from '../../executor/result.js';
import { decodeQueryRequest, encodeQueryResponse } from '../../encoding/public-proto.js';
import { queryResponseJson } from '../../encoding/query-json.js';
import { bodyBuffer, boolArg, isProtobuf, wantsProtobuf } from '../body.js';
import type { HttpContext } from '../context.js';
import { sendError, statusOf } from '../errors.js';
import { sendJson } from '../reply.js';

/** Pilosa 1.x names, the spec's names, and the 0.x `slices`. */
const ARGS = new Set(['shards', 'slices', 'columnAttrs', 'excludeRowAttrs', 'excludeColumns', 'excludeBits', 'excludeAttrs']);

export function queryRoutes(app: FastifyInstance, ctx: HttpContext): void {
  app.post<{ Params: { index: string }; Querystring: Record<string, string> }>(
    '/index/:index/query',
    { config: { errorShape: 'query' } },
    async (req, reply) => {
      const protoOut = wantsProtobuf(req.headers.accept);
      try {
        for (const k of Object.keys(req.query)) if (!ARGS.has(k)) throw badRequest(`${k} is not a valid argument`);
        let text: string;
        let opts: QueryOptions;
        if (isProtobuf(req.headers['content-type'])) {
          const r = decodeProtoQuery(bodyBuffer(req.body));
          text = r.query;
          opts = { shards: r.shards.length > 0 ? r.shards : undefined, columnAttrs: r.columnAttrs, excludeColumns: r.excludeColumns, excludeRowAttrs: r.excludeRowAttrs };
        } else {
          text = bodyBuffer(req.body).toString('utf8');
          const q = req.query;
          opts = {
            shards: parseShards(q.shards ?? q.slices),
            columnAttrs: boolArg(q.columnAttrs),
            excludeColumns: boolArg(q.excludeColumns) || boolArg(q.excludeBits),
            excludeRowAttrs: boolArg(q.excludeRowAttrs) || boolArg(q.excludeAttrs),
          };
        }
        const { response, legacy, calls } = await ctx.query.execute(req.params.index, text, opts);
        if (protoOut) return reply.code(200).type('application/protobuf').send(Buffer.from(encodeQueryResponse(response)));
        return sendJson(reply, queryResponseJson(response, legacy || req.query.slices !== undefined, calls));
      } catch (err) {
        if (protoOut && err instanceof DomainError) return sendProtoError(reply, err);
        throw err;
      }
    },
  );
  app.get('/index/:index/query', { config: { errorShape: 'query' } }, async (_req, reply) => sendError(reply, 405, 'method not allowed', 'query'));
}

function sendProtoError(reply: FastifyReply, err: DomainError): FastifyReply {
  return reply.code(statusOf(err)).type('application/protobuf').send(Buffer.from(encodeQueryResponse({ err: err.message })));
}

/** A PQL text sent with a protobuf Content-Type is told so, instead of a decoder's offset error. */
function decodeProtoQuery(body: Buffer): ReturnType<typeof decodeQueryRequest> {
  try {
    return decodeQueryRequest(body);
  } catch (err) {
    if (err instanceof DomainError && looksLikePql(body)) {
      throw badRequest('the body looks like PQL text but the Content-Type says protobuf: send PQL with Content-Type text/plain, or a protobuf QueryRequest with application/x-protobuf');
    }
    throw err;
  }
}

function looksLikePql(body: Buffer): boolean {
  return /^\s*[A-Za-z]\w*\s*\(/.test(body.subarray(0, 256).toString('latin1'));
}

function parseShards(v: string | undefined): number[] | undefined {
  if (v === undefined) return undefined;
  const out: number[] = [];
  for (const part of v.split(',')) {
    const s = part.trim();
    if (s === '') continue;
    if (!/^\d+$/.test(s) || !Number.isSafeInteger(Number(s))) throw badRequest('invalid shard argument');
    out.push(Number(s));
  }
  return out;
}
