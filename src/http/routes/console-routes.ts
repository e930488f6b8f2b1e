// The web console: GET / serves web/console/index.html to browsers (Accept: text/html), and
// /console/* its scripts and styles, from memory. Other clients of GET / get the same 404 as
// before (Pilosa 1.x answers 404 there too). GET /internal/state backs the status panel.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { repoPath } from '../../util/proto-path.js';
import type { HttpContext } from '../context.js';
import { durabilityState } from '../durability-state.js';
import { sendJson } from '../reply.js';
import { isNotModified, loadStaticAssets, type StaticAsset } from '../static-assets.js';

// The page may load only its own files and talk only to this server: no CDN, no inline script.
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'",
  'referrer-policy': 'no-referrer',
};

export function consoleRoutes(app: FastifyInstance, ctx: HttpContext): void {
  app.get('/internal/state', async (_req, reply) => sendJson(reply, await durabilityState(ctx.engine)));

  let assets: Map<string, StaticAsset>;
  try {
    assets = loadStaticAssets(repoPath(import.meta.url, 'web/console'));
  } catch (err) {
    app.log.warn({ err: String(err) }, 'web console files not found; GET / stays a 404');
    return;
  }
  const index = assets.get('index.html');
  app.get('/', async (req, reply) => {
    if (index === undefined || !acceptsHtml(req)) return reply.callNotFound();
    return sendAsset(req, reply.headers(PAGE_HEADERS), index);
  });
  app.get<{ Params: { '*': string } }>('/console/*', async (req, reply) => {
    const asset = assets.get(req.params['*']);
    if (asset === undefined) return reply.callNotFound();
    return sendAsset(req, reply, asset);
  });
}

function acceptsHtml(req: FastifyRequest): boolean {
  return req.headers.accept?.includes('text/html') === true;
}

function sendAsset(req: FastifyRequest, reply: FastifyReply, asset: StaticAsset): FastifyReply {
  // Names are not content-hashed, so the browser revalidates every time; the answer is then a
  // bodiless 304 unless the server was upgraded.
  reply.header('cache-control', 'no-cache').header('etag', asset.etag).header('x-content-type-options', 'nosniff');
  if (isNotModified(req.headers['if-none-match'], asset.etag)) return reply.code(304).send();
  return reply.type(asset.contentType).send(asset.body);
}
