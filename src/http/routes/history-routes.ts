// The restorable history (GET /internal/history) and an on-demand snapshot (POST /internal/snapshot).
import type { FastifyInstance } from 'fastify';
import { rfc3339, type HistoryPoint } from '../../engine/history.js';
import type { HttpContext } from '../context.js';
import { sendJson } from '../reply.js';

const point = (p: HistoryPoint): { seq: number; time: string | null } => ({ seq: p.seq, time: rfc3339(p.timeMs) });

export function historyRoutes(app: FastifyInstance, ctx: HttpContext): void {
  app.get('/internal/history', async (_req, reply) => {
    const h = await ctx.engine.history.window();
    return sendJson(reply, {
      oldest: point(h.oldest),
      newest: point(h.newest),
      snapshots: h.snapshots.map((s) => ({ seq: s.seq, time: rfc3339(s.timeMs), bytes: s.bytes })),
    });
  });

  app.post('/internal/snapshot', async (_req, reply) => sendJson(reply, { seq: await ctx.engine.snapshots.take() }));
}
