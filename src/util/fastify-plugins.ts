// fastify plugins as the route modules and the integrations (Kafka, the cluster) contribute them:
// named, so fastify's plugin tree (printPlugins) shows whose they are. A plugin lives in a scope
// of its own; one whose hooks must reach every route (a write waiting for the mirror, a replica
// refusing stale reads) carries fastify's skip-override mark, as the fastify-plugin package sets.
import type { FastifyPluginAsync } from 'fastify';

/** A plugin in a scope of its own: its hooks reach only its routes. */
export function scopedPlugin<O extends Record<string, unknown>>(
  name: string,
  fn: FastifyPluginAsync<O>,
): FastifyPluginAsync<O> {
  Object.defineProperty(fn, 'name', { value: name });
  Object.defineProperty(fn, Symbol.for('fastify.display-name'), { value: name });
  return fn;
}

/**
 * A plugin whose hooks reach every route of the app. Registered before the route modules:
 * a scope takes its parent's hooks when it loads.
 */
export function everyRoutePlugin<O extends Record<string, unknown>>(
  name: string,
  fn: FastifyPluginAsync<O>,
): FastifyPluginAsync<O> {
  Object.defineProperty(fn, Symbol.for('skip-override'), { value: true });
  return scopedPlugin(name, fn);
}
