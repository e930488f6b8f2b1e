// Operational hooks on every request: request ids (X-Request-Id in, or generated; echoed back),
// the capped access log, the slow-query log and the request metrics. Registered from src/app.ts
// so the route files stay as they are.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { onEachRoute } from './route-options.js';
import { systemClock } from '../util/clock.js';
import { AnsweredRequest, type OpsHookOptions, RequestOps, payloadBytes } from './request-ops.js';

export type { OpsHookOptions } from './request-ops.js';

/** Installs the hooks; returns the records they write to, which the lean query path shares. */
export function installOpsHooks(app: FastifyInstance, opts: OpsHookOptions): RequestOps {
  const ops = new RequestOps(opts);
  app.setGenReqId((req) => ops.requestId(req.headers['x-request-id']));
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
      observe(req, reply, ops.countsBytes ? payloadBytes(payload) : 0);
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
    const index = (req.params as { index?: string } | undefined)?.index;
    ops.observe(
      new AnsweredRequest(
        req.id,
        req.method,
        req.url,
        route,
        reply.statusCode,
        ms,
        bytes,
        req.body,
        req.headers['content-type'],
        index,
      ),
    );
  };
  return ops;
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
