// GET /health (the process answers), GET /ready (200 only when serving correctly, else 503 with
// the reason) and GET /metrics (Prometheus text).
import type { FastifyInstance } from 'fastify';
import type { ServerMetrics } from '../../metrics/server-metrics.js';
import type { Readiness } from '../readiness.js';
import { sendJson } from '../reply.js';

export function opsRoutes(
  app: FastifyInstance,
  metrics: ServerMetrics,
  ready: () => Readiness,
  state: () => string,
): void {
  app.get('/health', async (_req, reply) => sendJson(reply, { status: 'ok', state: state() }));
  app.get('/ready', async (_req, reply) => {
    const r = ready();
    return r.ready ? sendJson(reply, { ready: true }) : sendJson(reply, { ready: false, reason: r.reason }, 503);
  });
  app.get('/metrics', async (_req, reply) => reply.type(metrics.contentType).send(await metrics.text()));
}
