// Route options one module adds to another module's routes. Each route module is a fastify
// plugin with its own scope, so a hook it adds applies to its own routes only; where a 0.x
// variant changes a route of another module (--legacy-release, 0.x index options), it adds a
// hook to exactly that route's options as the route is declared (an onRoute hook on the root,
// installed before any plugin declares a route), instead of a global hook that looks at every
// request.
import type { FastifyInstance, RouteOptions } from 'fastify';

type HookName = 'onRequest' | 'preHandler' | 'onSend';

/** Calls `each` for every route declared from now on, in any plugin, with a way to add hooks to it. */
export function onEachRoute(
  app: FastifyInstance,
  each: (route: { url: string; methods: string[] }, add: (hook: HookName, fn: unknown) => void) => void,
): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = ([] as string[]).concat(route.method);
    const options = route as unknown as Record<HookName, unknown>;
    each({ url: route.url, methods }, (hook, fn) => {
      const current = options[hook];
      options[hook] = current === undefined ? [fn] : ([] as unknown[]).concat(current, fn);
    });
  });
}
