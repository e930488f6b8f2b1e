// Operational hooks on every request: request ids (X-Request-Id in, or generated; echoed back),
// the capped access log, the slow-query log and the request metrics. Registered from src/app.ts
// so the route files stay as they are.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { ServerMetrics } from '../metrics/server-metrics.js';
import { AccessLog } from './access-log.js';
import { firstPqlCall } from './pql-label.js';
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
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    try {
      observe(req, reply);
    } catch (err) {
      done(err as Error); // logged by fastify, as a rejected async hook was
      return;
    }
    done();
  });
  const observe = (req: FastifyRequest, reply: FastifyReply): void => {
    const ms = reply.elapsedTime;
    const route = req.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    opts.metrics.observeRequest(req.method, route, status, ms);
    if (route === QUERY_ROUTE) {
      opts.metrics.observePql(firstPqlCall(req.body, req.headers['content-type']), ms);
      if (opts.slowQueryMs > 0 && ms >= opts.slowQueryMs) logSlowQuery(opts.logger, req, ms, textChars);
    }
    if (access !== undefined)
      access.record({
        reqId: req.id,
        method: req.method,
        url: req.url,
        status,
        ms,
        bytes: Number(reply.getHeader('content-length') ?? 0),
      });
  };
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
