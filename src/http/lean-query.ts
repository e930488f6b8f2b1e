// The lean path of POST /index/{i}/query: the common query request (PQL text in, JSON out, no URL
// arguments) answered on Node's request and response, in front of fastify's routing, with what
// the query route and its hooks do for it: the security checks (security.ts), the request id,
// metrics, PQL label, slow-query and access logs (request-ops.ts), the query's deadline and
// client-gone flag, read-only tokens, the result bounds and sliced large answers, and the query
// route's error bodies. Fastify's generic path (its Request and Reply, the content-type parser,
// the hook runners, route lookup) cost about as much CPU as the rest of a small query together
// (issue 24: a Count of two empty rows took 116 µs of server CPU through fastify, 78 µs without).
// Any other request, or one the checks refuse, goes to fastify untouched (its body unread), so
// every answer is the route's own: protobuf, URL arguments, time travel, refusals, 413, 503 on
// closing. Servers whose integrations hook the query route (Kafka's mirror ack or replica, the
// cluster, --legacy-release) do not use it (server-http.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { DomainError } from '../domain/errors.js';
import { queryJsonChunks } from '../encoding/query-json-chunks.js';
import { queryResponseJson } from '../encoding/query-json.js';
import { stringify } from '../encoding/json.js';
import { roughAnswerBytes } from '../executor/answer-size.js';
import type { QueryOptions } from '../executor/result.js';
import { systemClock } from '../util/clock.js';
import { SLICED_FROM_BYTES, writeSliced } from './answer-writer.js';
import { isProtobuf, wantsProtobuf } from './body.js';
import type { QueryAnswer, QueryApi } from './context.js';
import { errorBody, internalError, statusOf } from './errors.js';
import { AnsweredRequest, QUERY_ROUTE, type RequestOps } from './request-ops.js';
import { ClientGone, QueryRun, STALE_READ_HEADER } from './routes/query-routes.js';
import type { CheckedRequest, SecurityChecks } from './security.js';

export interface LeanQueryParts {
  query: QueryApi;
  ops: RequestOps;
  /** The request checks; undefined: none (tests, tools). */
  checks: SecurityChecks | undefined;
  bodyLimit: number;
  logger: Logger;
  onInvariantBroken: (err: Error) => void;
}

/** Answers a request and returns true, or returns false (untouched) for fastify to answer. */
export type FrontDoor = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The options of a text query without URL arguments, as the route reads them (query-routes.ts). */
const NO_ARGS: QueryOptions = {
  shards: undefined,
  columnAttrs: false,
  excludeColumns: false,
  excludeRowAttrs: false,
};

const JSON_TYPE = 'application/json; charset=utf-8';

export function leanQuery(p: LeanQueryParts): FrontDoor {
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const url = req.url ?? '';
    const index = queryPathIndex(url);
    if (index === undefined) return false;
    const h = req.headers;
    // A body of a known length within the limit, text, answered as JSON; anything else is fastify's.
    // Node's parser has checked that Content-Length is digits.
    const length = h['content-length'];
    if (length === undefined || h['transfer-encoding'] !== undefined || !(Number(length) <= p.bodyLimit)) return false;
    const type = h['content-type'];
    if (type === undefined || (type !== 'text/plain' && isProtobuf(type))) return false;
    if (h.accept !== undefined && wantsProtobuf(h.accept)) return false;
    let readOnly = false;
    if (p.checks !== undefined) {
      const v = p.checks.verdict(new CheckedQuery(url, h.host, h.origin, h.authorization));
      if (v === 'read-only') readOnly = true;
      else if (v !== undefined) return false;
    }
    new LeanRequest(p, req, res, index, readOnly).start();
    return true;
  };
}

const PREFIX = '/index/';
const SUFFIX = '/query';

/**
 * The index of /index/{name}/query with a name as names.ts allows it ([a-z][a-z0-9_-]{0,63}:
 * nothing to decode), no arguments; else undefined. String tests, not a regular expression's
 * match array, on every request.
 */
export function queryPathIndex(url: string): string | undefined {
  const end = url.length - SUFFIX.length;
  if (end <= PREFIX.length || end - PREFIX.length > 64 || !url.startsWith(PREFIX) || !url.endsWith(SUFFIX))
    return undefined;
  const first = url.charCodeAt(PREFIX.length);
  if (first < 0x61 || first > 0x7a) return undefined;
  for (let i = PREFIX.length + 1; i < end; i++) {
    const c = url.charCodeAt(i);
    if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x2d)) return undefined;
  }
  return url.slice(PREFIX.length, end);
}

/** A query POST as the security checks read it (a class: one hidden class for every request). */
class CheckedQuery implements CheckedRequest {
  readonly method = 'POST';
  readonly route = QUERY_ROUTE;
  constructor(
    readonly url: string,
    readonly host: string | undefined,
    readonly origin: string | undefined,
    readonly authorization: string | undefined,
  ) {}
}

/** One request on the lean path, from its body to its answer. */
class LeanRequest {
  private readonly startedMs = systemClock.monotonic();
  private readonly reqId: string;
  private readonly chunks: Buffer[] = [];
  private body: Buffer | undefined;
  private client: ClientGone | undefined;

  constructor(
    private readonly p: LeanQueryParts,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly index: string,
    private readonly readOnly: boolean,
  ) {
    this.reqId = p.ops.requestId(req.headers['x-request-id']);
  }

  start(): void {
    const { req } = this;
    // Node's parser delivers exactly Content-Length bytes (checked to be digits and within the
    // limit): the body is complete with its last byte, so the query runs then, without an 'end'
    // listener and the turn endReadableNT waits for. An empty body has no data: 'end' it is.
    // No 'error' listener: a request cut off by its client emits none without one (Node's
    // IncomingMessage), nobody waits for the answer and nothing is recorded (as fastify).
    const length = Number(req.headers['content-length']);
    if (length === 0) {
      req.once('end', () => this.run());
      req.resume();
      return;
    }
    let got = 0;
    req.on('data', (c: Buffer) => {
      this.chunks.push(c);
      got += c.length;
      if (got === length) this.run();
    });
  }

  private run(): void {
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.body = body;
    this.client = new ClientGone(this.res);
    const run = new QueryRun(undefined, this.client, this.readOnly || undefined);
    const q = this.p.query;
    const text = body.toString('utf8');
    let answer: QueryAnswer | Promise<QueryAnswer>;
    try {
      // A small read answers now, in this turn: no promise hops (QueryService.executeNow).
      answer =
        q.executeNow !== undefined
          ? q.executeNow(this.index, text, NO_ARGS, run)
          : q.execute(this.index, text, NO_ARGS, run);
    } catch (err) {
      this.fail(err);
      return;
    }
    if (answer instanceof Promise)
      answer.then(
        (a) => this.answer(a),
        (err: unknown) => this.fail(err),
      );
    else this.answer(answer);
  }

  private answer({ response, legacy, calls, stale }: QueryAnswer): void {
    if (roughAnswerBytes(response) >= SLICED_FROM_BYTES) {
      void this.sliced(queryJsonChunks(response, legacy, calls), stale).catch((err: unknown) => this.fail(err));
      return;
    }
    this.send(200, stringify(queryResponseJson(response, legacy, calls)) + '\n', stale);
  }

  private async sliced(pieces: Iterable<string | Uint8Array>, stale: string | undefined): Promise<void> {
    const headers: Record<string, string> = { 'x-request-id': this.reqId };
    if (stale !== undefined) headers[STALE_READ_HEADER] = stale;
    const written = await writeSliced(this.res, headers, JSON_TYPE, pieces);
    if (written !== undefined) this.observe(200, written);
  }

  private fail(e: unknown): void {
    const err = e instanceof Error ? e : new Error(String(e));
    if (this.res.headersSent) {
      // A sliced answer cut by an error: the client sees the answer end short.
      this.p.logger.error({ err, reqId: this.reqId }, 'internal error');
      this.res.destroy();
      return;
    }
    // Nobody reads the error; the log shows the work was stopped, not finished.
    if (this.client?.aborted === true)
      this.p.logger.info({ reqId: this.reqId, index: this.index }, 'query cancelled: the client closed the connection');
    if (err instanceof DomainError) {
      this.send(statusOf(err), errorBody(err.message, 'query', err.reason), undefined);
      return;
    }
    this.send(500, internalError(err, this.p.logger, this.p.onInvariantBroken, 'query', this.reqId), undefined);
  }

  /** The answer's records (as fastify's onSend hook), then the answer, headers as fastify writes them. */
  private send(status: number, body: string, stale: string | undefined): void {
    const bytes = Buffer.byteLength(body);
    this.observe(status, this.p.ops.countsBytes ? bytes : 0);
    const headers: Record<string, string | number> = { 'x-request-id': this.reqId };
    if (stale !== undefined) headers[STALE_READ_HEADER] = stale;
    headers['content-type'] = JSON_TYPE;
    headers['content-length'] = bytes;
    this.res.writeHead(status, headers);
    this.res.end(body);
  }

  private observe(status: number, bytes: number): void {
    const { req } = this;
    const ms = systemClock.monotonic() - this.startedMs;
    const url = req.url ?? '';
    this.p.ops.observe(
      new AnsweredRequest(
        this.reqId,
        'POST',
        url,
        QUERY_ROUTE,
        status,
        ms,
        bytes,
        this.body,
        req.headers['content-type'],
        this.index,
      ),
    );
  }
}
