// POST /index/{i}/query: PQL text or protobuf QueryRequest in; JSON or protobuf out.
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { parseDurationMs } from '../../config/config.js';
import { DomainError, badRequest } from '../../domain/errors.js';
import { notValidArgument } from '../../domain/messages.js';
import { checkShard, parseShard } from '../../domain/shard.js';
import { isDateTime } from '../../domain/time-quantum.js';
import type { QueryOptions } from '../../executor/result.js';
import { parseTimeArg, type Target } from '../../engine/history.js';
import { decodeQueryRequest, encodeQueryResponse, queryResponseProtoPieces } from '../../encoding/public-proto.js';
import { queryJsonChunks } from '../../encoding/query-json-chunks.js';
import { roughAnswerBytes } from '../../executor/answer-size.js';
import { SLICED_FROM_BYTES, sendSliced } from '../answer-writer.js';
import { queryResponseJson } from '../../encoding/query-json.js';
import { bodyBuffer, boolArg, isProtobuf, parseUint, wantsProtobuf } from '../body.js';
import type { HttpContext } from '../context.js';
import type { QueryRequestBounds } from '../../service/query-service.js';
import { sendError, statusOf } from '../errors.js';
import { sendJson } from '../reply.js';

/** Marks a cluster read answered without the broker (--cluster-stale-reads), with why. */
export const STALE_READ_HEADER = 'x-bitledger-stale-read';

/** Pilosa 1.x names, the spec's names, and the 0.x `slices`. */
const ARGS = new Set([
  'timeout',
  'shards',
  'slices',
  'columnAttrs',
  'excludeRowAttrs',
  'excludeColumns',
  'excludeBits',
  'excludeAttrs',
  'atSeq',
  'atTime',
]);

export function queryRoutes(app: FastifyInstance, ctx: HttpContext): void {
  app.post<{ Params: { index: string }; Querystring: Record<string, string> }>(
    '/index/:index/query',
    { config: { errorShape: 'query' } },
    async (req, reply) => {
      const protoOut = wantsProtobuf(req.headers.accept);
      let gone: ClientGone | undefined;
      try {
        for (const k of Object.keys(req.query)) if (!ARGS.has(k)) throw notValidArgument(k);
        const { text, opts } = queryRequest(req.headers['content-type'], req.body, req.query);
        const timeoutMs = req.query.timeout === undefined ? undefined : parseTimeout(req.query.timeout);
        const client = new ClientGone(reply.raw);
        gone = client;
        const at = pastTarget(req.query);
        const run = new QueryRun(timeoutMs, client, req.readOnlyToken);
        const { response, legacy, calls, stale } = await (at === undefined
          ? ctx.query.execute(req.params.index, text, opts, run)
          : ctx.query.executeAt(req.params.index, text, opts, at, run));
        if (stale !== undefined) reply.header(STALE_READ_HEADER, stale);
        const legacyNames = legacy || req.query.slices !== undefined;
        if (roughAnswerBytes(response) >= SLICED_FROM_BYTES) {
          await (protoOut
            ? sendSliced(reply, 'application/protobuf', queryResponseProtoPieces(response))
            : sendSliced(reply, 'application/json; charset=utf-8', queryJsonChunks(response, legacyNames, calls)));
          return reply;
        }
        if (protoOut)
          return reply
            .code(200)
            .type('application/protobuf')
            .send(Buffer.from(encodeQueryResponse(response)));
        return sendJson(reply, queryResponseJson(response, legacyNames, calls));
      } catch (err) {
        // Nobody reads the error; the log shows the work was stopped, not finished.
        if (gone?.aborted === true)
          req.log.info({ index: req.params.index }, 'query cancelled: the client closed the connection');
        if (protoOut && err instanceof DomainError) return sendProtoError(reply, err);
        throw err;
      }
    },
  );
  app.get('/index/:index/query', { config: { errorShape: 'query' } }, async (_req, reply) =>
    sendError(reply, 405, 'method not allowed', 'query'),
  );
}

/** The query text and its options, from a protobuf QueryRequest or a text body and URL arguments. */
function queryRequest(
  contentType: string | undefined,
  body: unknown,
  query: Record<string, string>,
): { text: string; opts: QueryOptions } {
  let text: string;
  let opts: QueryOptions;
  if (isProtobuf(contentType)) {
    const r = decodeProtoQuery(bodyBuffer(body));
    text = r.query;
    for (const s of r.shards) checkShard(s);
    opts = {
      shards: r.shards.length > 0 ? r.shards : undefined,
      columnAttrs: r.columnAttrs,
      excludeColumns: r.excludeColumns,
      excludeRowAttrs: r.excludeRowAttrs,
    };
  } else {
    text = bodyBuffer(body).toString('utf8');
    opts = {
      shards: parseShards(query.shards ?? query.slices),
      columnAttrs: boolArg(query.columnAttrs),
      excludeColumns: boolArg(query.excludeColumns) || boolArg(query.excludeBits),
      excludeRowAttrs: boolArg(query.excludeRowAttrs) || boolArg(query.excludeAttrs),
    };
  }
  return { text, opts };
}

function sendProtoError(reply: FastifyReply, err: DomainError): FastifyReply {
  return reply
    .code(statusOf(err))
    .type('application/protobuf')
    .send(Buffer.from(encodeQueryResponse({ err: err.message })));
}

/** A PQL text sent with a protobuf Content-Type is told so, instead of a decoder's offset error. */
function decodeProtoQuery(body: Buffer): ReturnType<typeof decodeQueryRequest> {
  try {
    return decodeQueryRequest(body);
  } catch (err) {
    if (err instanceof DomainError && looksLikePql(body)) {
      throw badRequest(
        'the body looks like PQL text but the Content-Type says protobuf: send PQL with Content-Type text/plain, or a protobuf QueryRequest with application/x-protobuf',
      );
    }
    throw err;
  }
}

function looksLikePql(body: Buffer): boolean {
  return /^\s*[A-Za-z]\w*\s*\(/.test(body.subarray(0, 256).toString('latin1'));
}

/** Pilosa's `timeout` argument: a Go duration (10s, 1m30s, 500ms) or a number of ms. */
function parseTimeout(v: string): number {
  const ms = parseDurationMs(v);
  if (ms === undefined || ms <= 0) throw badRequest('invalid timeout argument: want a duration such as 10s or 500ms');
  return ms;
}

/**
 * What one query request asks of its bounds. `client` is what one node reads; `signal` (the
 * cluster's fan-out) is made on first read. A class, not an object literal with a `signal`
 * getter: measured with --trace-gc-nvp under wrk, that literal made about 2 MB of each scavenge
 * survive into the old generation (about 20% of what a Count allocates; 5 KB without it) and cost
 * about 20 µs of CPU a request. A literal's getter is a new closure per request, so each object
 * gets a hidden class of its own; hidden classes live in the old generation and the getter's
 * closure reaches the request (client -> reply), so a scavenge keeps the whole request alive until
 * the next full collection.
 */
export class QueryRun implements QueryRequestBounds {
  constructor(
    readonly timeoutMs: number | undefined,
    readonly client: ClientGone,
    readonly readOnly: boolean | undefined,
  ) {}

  get signal(): AbortSignal {
    return this.client.signal();
  }
}

/**
 * Whether the client closed the connection before its answer; an AbortSignal for it only when
 * asked for: an AbortController costs several µs (its EventTarget), more than a small query's
 * evaluation, and one node's query only ever reads `aborted`. The flag reads the socket when
 * asked, so a request that never asks adds no listener either (a close listener a request cost
 * about 1.5 µs of event-emitter work).
 */
export class ClientGone {
  private controller: AbortController | undefined;

  constructor(private readonly res: ServerResponse) {}

  get aborted(): boolean {
    const res = this.res;
    return !res.writableFinished && (res.destroyed || res.socket?.destroyed === true);
  }

  signal(): AbortSignal {
    if (this.controller === undefined) {
      const controller = new AbortController();
      this.controller = controller;
      if (this.aborted) controller.abort();
      else {
        const res = this.res;
        res.once('close', () => {
          if (!res.writableFinished) controller.abort();
        });
      }
    }
    return this.controller.signal;
  }
}

/** atSeq=N or atTime=RFC3339|Unix seconds: a time-travel read; neither: the live state. */
function pastTarget(q: Record<string, string>): Target | undefined {
  if (q.atSeq !== undefined && q.atTime !== undefined) throw badRequest('give atSeq or atTime, not both');
  if (q.atSeq !== undefined) return { seq: parseUint(q.atSeq, 'atSeq') };
  if (q.atTime !== undefined) {
    const timeMs = parseTimeArg(q.atTime);
    if (timeMs === undefined)
      throw badRequest('atTime should be an RFC 3339 time (2026-11-24T14:03:00Z) or Unix seconds');
    if (!isDateTime(timeMs))
      throw badRequest(
        `atTime ${q.atTime} is outside the times this server can represent (±8.64e15 ms from 1970, years -271821 to 275760)`,
      );
    return { timeMs };
  }
  return undefined;
}

function parseShards(v: string | undefined): number[] | undefined {
  if (v === undefined) return undefined;
  const out: number[] = [];
  for (const part of v.split(',')) {
    const s = part.trim();
    if (s === '') continue;
    if (!/^\d+$/.test(s)) throw badRequest('invalid shard argument');
    out.push(parseShard(s));
  }
  return out;
}
