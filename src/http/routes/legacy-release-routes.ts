// --legacy-release X: the HTTP side of answering as one 0.x release (rules in
// service/legacy/legacy-release.ts): endpoints the release lacks are 404, index listings take
// the 0.x shapes ({"index":{"name"},"frames":[…]}), and mutating endpoints answer {}.
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../domain/errors.js';
import { EXISTS_FIELD } from '../../domain/names.js';
import { type LegacyRelease, releaseHas } from '../../service/legacy/legacy-release.js';
import type { HttpContext } from '../context.js';
import { sendJson } from '../reply.js';
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

export function legacyReleaseRoutes(app: FastifyInstance, ctx: HttpContext, release: LegacyRelease): void {
  if (release === '') return;
  app.addHook('onRequest', async (req) => {
    const family = FAMILIES[req.routeOptions.url ?? ''];
    if (family !== undefined && !releaseHas(release, family))
      throw notFound(
        `not found: ${req.method} ${req.url} (release ${release} has no ${family} endpoint; --legacy-release)`,
      );
  });
  app.addHook('preHandler', async (req, reply) => {
    if (req.method !== 'GET') return;
    const route = req.routeOptions.url;
    if (route === '/index' || route === '/schema') {
      const body = await ctx.engine.read((h) => ({
        indexes: [...h.indexes.values()].map((i) => ({ name: i.name, frames: frames(i) })),
      }));
      return sendJson(reply, body);
    }
    if (route === '/index/:index') {
      const name = (req.params as { index: string }).index;
      const body = await ctx.engine.read((h) => {
        const i = h.index(name);
        if (i === undefined) throw notFound(`index ${name} not found`);
        return { index: { name: i.name }, frames: frames(i) };
      });
      return sendJson(reply, body);
    }
  });
  // 0.5 to 0.10 answer every mutating endpoint with an empty object.
  app.addHook('onSend', async (req, reply, payload) => {
    if (req.method === 'GET' || reply.statusCode !== 200 || payload !== '{"success":true}\n') return payload;
    return '{}\n';
  });
}
