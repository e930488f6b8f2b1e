// --legacy-release X: the HTTP side of answering as one 0.x release (rules in
// service/legacy/legacy-release.ts): endpoints the release lacks are 404, index listings take
// the 0.x shapes ({"index":{"name"},"frames":[…]}), and mutating endpoints answer {} — each as
// an option of the routes it changes, added as they are declared.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../../domain/errors.js';
import { EXISTS_FIELD } from '../../domain/names.js';
import { type LegacyRelease, releaseHas } from '../../service/legacy/legacy-release.js';
import type { HttpContext } from '../context.js';
import { sendJson } from '../reply.js';
import { onEachRoute } from '../route-options.js';
import type { ReadonlyIndex } from '../../state/readonly.js';

type Family = Parameters<typeof releaseHas>[1];

const FAMILIES: Record<string, Family> = {
  '/index/:index/input-definition/:name': 'input-definitions',
  '/index/:index/input/:name': 'input-definitions',
  '/index/:index/time-quantum': 'time-quantum',
  '/index/:index/frame/:frame/time-quantum': 'time-quantum',
  '/hosts': 'hosts',
  '/recalculate-caches': 'recalculate-caches',
};

/** An index's frames: its fields but the existence field and the frames' int fields. */
function frames(index: ReadonlyIndex): { name: string }[] {
  return [...index.fields.values()]
    .filter((f) => f.name !== EXISTS_FIELD && f.options.type !== 'int')
    .map((f) => ({ name: f.name }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}

/**
 * Route options of the routes the release changes (route-options.ts): the endpoint families it
 * lacks answer 404, the index listings take the 0.x shapes, and mutating routes answer {}.
 */
export function legacyReleaseRoutes(app: FastifyInstance, ctx: HttpContext, release: LegacyRelease): void {
  if (release === '') return;
  const listings = legacyListings(ctx);
  onEachRoute(app, (route, add) => {
    const family = FAMILIES[route.url];
    if (family !== undefined && !releaseHas(release, family))
      add('onRequest', async (req: FastifyRequest) => {
        throw notFound(
          `not found: ${req.method} ${req.url} (release ${release} has no ${family} endpoint; --legacy-release)`,
        );
      });
    const listing = listings[route.url];
    if (listing !== undefined && route.methods.includes('GET')) add('preHandler', listing);
    // 0.5 to 0.10 answer every mutating endpoint with an empty object.
    if (route.methods.some((m) => m !== 'GET' && m !== 'HEAD')) add('onSend', emptySuccess);
  });
}

async function emptySuccess(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (req.method === 'GET' || reply.statusCode !== 200 || payload !== '{"success":true}\n') return payload;
  return '{}\n';
}

type Listing = (req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>;

/** The 0.x shapes of the index listings, by route. */
function legacyListings(ctx: HttpContext): Record<string, Listing> {
  const all: Listing = async (req, reply) => {
    if (req.method !== 'GET') return;
    const body = await ctx.engine.read((h) => ({
      indexes: [...h.indexes.values()].map((i) => ({ name: i.name, frames: frames(i) })),
    }));
    return sendJson(reply, body);
  };
  const one: Listing = async (req, reply) => {
    if (req.method !== 'GET') return;
    const name = (req.params as { index: string }).index;
    const body = await ctx.engine.read((h) => {
      const i = h.index(name);
      if (i === undefined) throw notFound(`index ${name} not found`);
      return { index: { name: i.name }, frames: frames(i) };
    });
    return sendJson(reply, body);
  };
  return { '/index': all, '/schema': all, '/index/:index': one };
}
