// HTTP surface of src/kafka: ingest definitions (create, inspect, start, stop, delete) and the
// mirror / replica gauges. Errors are DomainErrors rendered by the shared error handler.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { everyRoutePlugin, scopedPlugin } from '../util/fastify-plugins.js';
import { DomainError, notFound } from '../domain/errors.js';
import { jsonBody } from '../encoding/json-body.js';
import { noteStaged, type RequestWrites, runInRequest } from './request-writes.js';
import type { KafkaRuntime } from './index.js';

type NameParams = { name: string };

/** Routes that answer from the data (a stuck replica refuses them). */
const STALE_READS = new Set(['/index/:index/query', '/export', '/index/:index/frame/:frame/export']);

function send(reply: FastifyReply, body: unknown, status = 200): FastifyReply {
  return reply
    .code(status)
    .type('application/json')
    .send(JSON.stringify(body) + '\n');
}

/**
 * What Kafka contributes to the HTTP app (src/server-http.ts registers them before the route
 * modules): hooks on every route, and the /ingest and /kafka routes in a scope of their own.
 */
export function kafkaPlugins(kafka: KafkaRuntime): FastifyPluginAsync[] {
  return [
    everyRoutePlugin('kafkaHooks', async (app) => kafkaHooks(app, kafka)),
    scopedPlugin('kafkaRoutes', async (app) => kafkaRoutes(app, kafka)),
  ];
}

/** A write waiting for the mirror (--kafka-mirror-ack kafka); a stuck replica refusing reads. */
function kafkaHooks(app: FastifyInstance, kafka: KafkaRuntime): void {
  if (kafka.mirrorAck === 'kafka') {
    // Opt-in (--kafka-mirror-ack kafka): a write is answered once the mirror topic holds what
    // this request wrote (or 503 after the timeout); a request that wrote nothing never waits.
    const writes = new WeakMap<object, RequestWrites>();
    kafka.onStaged(noteStaged);
    app.addHook('preHandler', (req, _reply, done) => {
      const w: RequestWrites = { lastSeq: 0 };
      writes.set(req, w);
      runInRequest(w, done);
    });
    app.addHook('onSend', async (req, reply, payload) => {
      const seq = writes.get(req)?.lastSeq ?? 0;
      if (seq > 0 && reply.statusCode < 500) await kafka.whenMirrored(seq);
      return payload;
    });
  }

  if (kafka.replica !== undefined) {
    const replica = kafka.replica;
    // Answers from a replica stuck before a gap would be silently stale: refuse them.
    app.addHook('preHandler', async (req) => {
      const gap = replica.cannotFollow;
      if (gap !== undefined && STALE_READS.has(req.routeOptions.url ?? ''))
        throw new DomainError(
          'unavailable',
          `this replica cannot follow Kafka topic "${replica.topic}" and answers no queries: ${gap}`,
        );
    });
  }
}

function kafkaRoutes(app: FastifyInstance, kafka: KafkaRuntime): void {
  const ingests = kafka.ingests;
  app.get('/ingest', async (_req, reply) => send(reply, { ingests: ingests.list().map((n) => ingests.status(n)) }));
  app.get<{ Params: NameParams }>('/ingest/:name', async (req, reply) =>
    send(reply, await ingests.inspect(req.params.name)),
  );
  app.post<{ Params: NameParams }>('/ingest/:name', async (req, reply) =>
    send(reply, await ingests.define(req.params.name, jsonBody(req.body))),
  );
  app.delete<{ Params: NameParams }>('/ingest/:name', async (req, reply) => {
    await ingests.remove(req.params.name);
    return send(reply, { success: true });
  });
  app.post<{ Params: NameParams }>('/ingest/:name/start', async (req, reply) =>
    send(reply, await ingests.setRunning(req.params.name, true)),
  );
  app.post<{ Params: NameParams }>('/ingest/:name/stop', async (req, reply) =>
    send(reply, await ingests.setRunning(req.params.name, false)),
  );

  app.get('/kafka/mirror', async (_req, reply) => {
    if (kafka.mirror === undefined) throw notFound('no Kafka mirror configured (--kafka-mirror-topic)');
    return send(reply, kafka.mirror.status());
  });
  app.get('/kafka/replica', async (_req, reply) => {
    if (kafka.replica === undefined) throw notFound('this node is not a replica (--replica-of)');
    return send(reply, kafka.replica.status());
  });
}
