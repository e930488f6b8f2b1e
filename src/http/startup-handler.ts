// What the listening socket answers while the server replays its log (before the fastify app
// exists): /health 200, /ready and /status 503 with the replay's progress, /metrics (replay
// gauges), everything else 503 "starting". Kept to plain node:http so it needs nothing booted.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerMetrics } from '../metrics/server-metrics.js';
import { startingReason } from './readiness.js';

export function startupHandler(metrics: ServerMetrics): (req: IncomingMessage, res: ServerResponse) => void {
  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '1' });
    res.end(JSON.stringify(body) + '\n');
  };
  return (req, res) => {
    // The body (if any) is not read: drain it so the connection stays usable.
    req.resume();
    const path = (req.url ?? '/').split('?')[0];
    const p = metrics.replay;
    if (path === '/health') return json(res, 200, { status: 'ok', state: 'STARTING' });
    if (path === '/ready') return json(res, 503, { ready: false, reason: startingReason(p) });
    if (path === '/status')
      return json(res, 503, { state: 'STARTING', progress: { phase: p.phase, done: p.done, total: p.total } });
    if (path === '/metrics') {
      void metrics.text().then((text) => {
        res.writeHead(200, { 'content-type': metrics.contentType });
        res.end(text);
      });
      return;
    }
    json(res, 503, { error: startingReason(p) });
  };
}
