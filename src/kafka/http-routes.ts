// HTTP surface of src/kafka: ingest definitions (create, inspect, start, stop, delete) and the
// mirror / replica gauges. Errors are DomainErrors rendered by the shared error handler.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { notFound } from '../domain/errors.js';
import { jsonBody } from '../encoding/json-body.js';
import type { KafkaRuntime } from './index.js';

type NameParams = { name: string };

function send(reply: FastifyReply, body: unknown, status = 200): FastifyReply {
  return reply.code(status).type('application/json').send(JSON.stringify(body) + '\n');
}

export function kafkaRoutes(app: FastifyInstance, kafka: KafkaRuntime): void {
  const ingests = kafka.ingests;

  if (kafka.mirrorAck === 'kafka') {
    // Opt-in (--kafka-mirror-ack kafka): a write is answered once the mirror topic holds it.
    app.addHook('onSend', async (req, _reply, payload) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') await kafka.whenMirrored();
      return payload;
    });
  }

  app.get('/ingest', async (_req, reply) => send(reply, { ingests: ingests.list().map((n) => ingests.status(n)) }));
  app.get<{ Params: NameParams }>('/ingest/:name', async (req, reply) => send(reply, await ingests.inspect(req.params.name)));
  app.post<{ Params: NameParams }>('/ingest/:name', async (req, reply) => send(reply, await ingests.define(req.params.name, jsonBody(req.body))));
  app.delete<{ Params: NameParams }>('/ingest/:name', async (req, reply) => {
    await ingests.remove(req.params.name);
    return send(reply, { success: true });
  });
  app.post<{ Params: NameParams }>('/ingest/:name/start', async (req, reply) => send(reply, await ingests.setRunning(req.params.name, true)));
  app.post<{ Params: NameParams }>('/ingest/:name/stop', async (req, reply) => send(reply, await ingests.setRunning(req.params.name, false)));

  app.get('/kafka/mirror', async (_req, reply) => {
    if (kafka.mirror === undefined) throw notFound('no Kafka mirror configured (--kafka-mirror-topic)');
    return send(reply, kafka.mirror.status());
  });
  app.get('/kafka/replica', async (_req, reply) => {
    if (kafka.replica === undefined) throw notFound('this node is not a replica (--replica-of)');
    return send(reply, kafka.replica.status());
  });
}
