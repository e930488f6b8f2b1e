// What every request records, whichever way it was served (fastify's hooks in ops-hooks.ts, or
// the lean query path of lean-query.ts): its request id (X-Request-Id in, or generated), the
// request metrics, the PQL call label and the slow-query log of queries, and the capped access log.
import type { Logger } from 'pino';
import type { ServerMetrics } from '../metrics/server-metrics.js';
import { systemClock } from '../util/clock.js';
import { AccessLog } from './access-log.js';
import { firstPqlCall } from './pql-label.js';

export interface OpsHookOptions {
  metrics: ServerMetrics;
  logger: Logger;
  /** 0: no access log. */
  accessLogPerSecond: number;
  /** 0: no slow-query log. */
  slowQueryMs: number;
  /** The slow-query log cuts the PQL text to this many characters. */
  slowQueryTextChars?: number;
}

export const QUERY_ROUTE = '/index/:index/query';
/** Client-supplied ids are echoed only when short and plain, so logs cannot be forged or bloated. */
const CLIENT_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** One answered request as the records see it (a class: one hidden class for every request). */
export class AnsweredRequest {
  constructor(
    readonly reqId: string,
    readonly method: string,
    readonly url: string,
    /** The route's pattern ('unmatched' for none). */
    readonly route: string,
    readonly status: number,
    /** From the request's start to its answer handed to the socket. */
    readonly ms: number,
    /** The answer's body bytes (0 when the access log is off: not counted). */
    readonly bytes: number,
    /** The request's body (a query's PQL text or protobuf) and its Content-Type. */
    readonly body: unknown,
    readonly contentType: string | undefined,
    /** A query's index (the slow-query log names it). */
    readonly index: string | undefined,
  ) {}
}

export class RequestOps {
  private counter = 0;
  private readonly prefix = systemClock.now().toString(36);
  private readonly access: AccessLog | undefined;
  private readonly textChars: number;
  /** The query route's POSTs, the most frequent requests, observed through keys made once. */
  private readonly queryPosts: (status: number, ms: number) => void;

  constructor(private readonly opts: OpsHookOptions) {
    this.queryPosts = opts.metrics.routeRequests('POST', QUERY_ROUTE);
    this.access =
      opts.accessLogPerSecond > 0
        ? new AccessLog(opts.logger.child({ mod: 'access' }), opts.accessLogPerSecond)
        : undefined;
    this.textChars = opts.slowQueryTextChars ?? 500;
  }

  /** The client's id when plain and short, else a new one. */
  requestId(given: string | string[] | undefined): string {
    return typeof given === 'string' && CLIENT_ID.test(given)
      ? given
      : `${this.prefix}-${(++this.counter).toString(36)}`;
  }

  /** Whether answers' bytes are wanted (the access log logs them). */
  get countsBytes(): boolean {
    return this.access !== undefined;
  }

  observe(r: AnsweredRequest): void {
    if (r.route === QUERY_ROUTE && r.method === 'POST') this.queryPosts(r.status, r.ms);
    else this.opts.metrics.observeRequest(r.method, r.route, r.status, r.ms);
    if (r.route === QUERY_ROUTE) {
      this.opts.metrics.observePql(firstPqlCall(r.body, r.contentType), r.ms);
      if (this.opts.slowQueryMs > 0 && r.ms >= this.opts.slowQueryMs) this.logSlowQuery(r);
    }
    if (this.access !== undefined)
      this.access.record({ reqId: r.reqId, method: r.method, url: r.url, status: r.status, ms: r.ms, bytes: r.bytes });
  }

  private logSlowQuery(r: AnsweredRequest): void {
    const body = r.body;
    const textChars = this.textChars;
    const isText = Buffer.isBuffer(body) && !String(r.contentType ?? '').includes('protobuf');
    // Decode at most 4 bytes per kept character: a huge query body is never decoded whole.
    const text = isText ? body.toString('utf8', 0, Math.min(body.length, textChars * 4)) : '';
    const pql = !isText
      ? '(protobuf)'
      : text.length > textChars || body.length > textChars * 4
        ? `${text.slice(0, textChars)}…`
        : text;
    this.opts.logger.warn({ reqId: r.reqId, index: r.index, ms: Math.round(r.ms), pql }, 'slow query');
  }
}

/** The bytes of an answer's body (a string or a buffer; 0 for a stream or none). */
export function payloadBytes(payload: unknown): number {
  if (typeof payload === 'string') return Buffer.byteLength(payload);
  return payload instanceof Uint8Array ? payload.byteLength : 0;
}
