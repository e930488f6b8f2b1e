// Operational hooks on every request: request ids (X-Request-Id in, or generated; echoed back),
// the capped access log, the slow-query log and the request metrics. Registered from src/app.ts
// so the route files stay as they are.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { ServerMetrics } from '../metrics/server-metrics.js';
import { AccessLog } from './access-log.js';
import { firstPqlCall } from './pql-label.js';
import { onEachRoute } from './route-options.js';
import { systemClock } from '../util/clock.js';

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

const QUERY_ROUTE = '/index/:index/query';
/** Client-supplied ids are echoed only when short and plain, so logs cannot be forged or bloated. */
const CLIENT_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export function installOpsHooks(app: FastifyInstance, opts: OpsHookOptions): void {
  let counter = 0;
  const prefix = systemClock.now().toString(36);
  app.setGenReqId((req) => {
    const given = req.headers['x-request-id'];
    return typeof given === 'string' && CLIENT_ID.test(given) ? given : `${prefix}-${(++counter).toString(36)}`;
  });
  const access =
    opts.accessLogPerSecond > 0
      ? new AccessLog(opts.logger.child({ mod: 'access' }), opts.accessLogPerSecond)
      : undefined;
  const textChars = opts.slowQueryTextChars ?? 500;
  // Callback hooks, not async ones: an async hook costs a promise and a microtask hop a request.
  app.decorateRequest('startedMs', 0);
  app.addHook('onRequest', (req, reply, done) => {
    req.startedMs = systemClock.monotonic();
    reply.header('x-request-id', req.id);
    done();
  });
  // Observed as the answer is handed to the socket (onSend), not once it is written
  // (onResponse): an onResponse hook makes fastify put a 'finish' and an 'error' listener on
  // every response, about 1 µs a request of a 16-connection Count. A route's own onSend hooks
  // run after every instance-wide one, so this one is added to each route as it is declared
  // (route-options.ts): it then sees the final status and time, after Kafka's wait for the
  // mirror (--kafka-mirror-ack kafka), which can still turn an answer into a 503. Requests no
  // route matched get it from an instance-wide hook. Answers written in slices
  // (answer-writer.ts) skip onSend and report through reply.answerSent once written.
  const onSend = (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: OnSendDone): void => {
    try {
      observe(req, reply, access === undefined ? 0 : payloadBytes(payload));
    } catch (err) {
      done(err as Error); // fastify answers 500, as for a throwing async hook
      return;
    }
    done(null, payload);
  };
  onEachRoute(app, (_route, add) => add('onSend', onSend));
  app.addHook('onSend', (req, reply, payload, done) => {
    if (req.is404) onSend(req, reply, payload, done);
    else done(null, payload);
  });
  app.decorateReply('answerSent', function (this: FastifyReply, bytes: number): void {
    observe(this.request, this, bytes);
  });
  const observe = (req: FastifyRequest, reply: FastifyReply, bytes: number): void => {
    const ms = systemClock.monotonic() - req.startedMs;
    const route = req.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    opts.metrics.observeRequest(req.method, route, status, ms);
    if (route === QUERY_ROUTE) {
      opts.metrics.observePql(firstPqlCall(req.body, req.headers['content-type']), ms);
      if (opts.slowQueryMs > 0 && ms >= opts.slowQueryMs) logSlowQuery(opts.logger, req, ms, textChars);
    }
    if (access !== undefined) access.record({ reqId: req.id, method: req.method, url: req.url, status, ms, bytes });
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** When the request reached the onRequest hooks (monotonic ms): its duration's start. */
    startedMs: number;
  }
  interface FastifyReply {
    /** An answer written outside fastify's send (reply.hijack()) reports its bytes once written. */
    answerSent?: (bytes: number) => void;
  }
}

type OnSendDone = (err: Error | null, payload?: unknown) => void;

/** The bytes of an answer's body as onSend sees it (a string or a buffer; 0 for a stream or none). */
function payloadBytes(payload: unknown): number {
  if (typeof payload === 'string') return Buffer.byteLength(payload);
  return payload instanceof Uint8Array ? payload.byteLength : 0;
}

function logSlowQuery(logger: Logger, req: FastifyRequest, ms: number, textChars: number): void {
  const body = req.body;
  const isText = Buffer.isBuffer(body) && !String(req.headers['content-type'] ?? '').includes('protobuf');
  // Decode at most 4 bytes per kept character: a huge query body is never decoded whole.
  const text = isText ? body.toString('utf8', 0, Math.min(body.length, textChars * 4)) : '';
  const pql = !isText
    ? '(protobuf)'
    : text.length > textChars || body.length > textChars * 4
      ? `${text.slice(0, textChars)}…`
      : text;
  logger.warn(
    { reqId: req.id, index: (req.params as { index?: string }).index, ms: Math.round(ms), pql },
    'slow query',
  );
}
