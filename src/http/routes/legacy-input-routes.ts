// Legacy (0.5–0.9) input definitions: define, read, delete, and ingest JSON records through one.
import type { FastifyInstance } from 'fastify';
import { type InputApi, InputService } from '../../service/legacy/input-service.js';
import { jsonBody } from '../../encoding/json-body.js';
import type { HttpContext } from '../context.js';
import { sendJson } from '../reply.js';

type Params = { index: string; name: string };

export function legacyInputRoutes(app: FastifyInstance, ctx: HttpContext): void {
  // Cluster mode: the frame service's own, which writes through Kafka (coordination/input-coordinator.ts).
  const inputs: InputApi = ctx.topology.inputs ?? new InputService(ctx.engine, ctx.imports);
  app.post<{ Params: Params }>('/index/:index/input-definition/:name', async (req, reply) => {
    await inputs.define(req.params.index, req.params.name, jsonBody(req.body));
    return sendJson(reply, {});
  });
  app.get<{ Params: Params }>('/index/:index/input-definition/:name', async (req, reply) => {
    const def = await inputs.get(req.params.index, req.params.name);
    // Plain JSON data (the canonical definition): no 64-bit integers to keep exact.
    return reply
      .code(200)
      .type('application/json')
      .send(JSON.stringify(def) + '\n');
  });
  app.delete<{ Params: Params }>('/index/:index/input-definition/:name', async (req, reply) => {
    await inputs.delete(req.params.index, req.params.name);
    return sendJson(reply, {});
  });
  app.post<{ Params: Params }>('/index/:index/input/:name', async (req, reply) => {
    await inputs.ingest(req.params.index, req.params.name, jsonBody(req.body));
    return sendJson(reply, {});
  });
}
