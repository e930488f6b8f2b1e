// The fastify application, built apart from listen() so tests can inject().
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import { LIMITS } from '../config/limits.js';
import { scopedPlugin } from '../util/fastify-plugins.js';
import type { HttpContext } from './context.js';
import type { FrontDoors } from './front-door.js';
import { installErrorHandler } from './errors.js';
import { requestLogs } from './request-log.js';
import { type SecurityOptions, installSecurity } from './security.js';
import { clusterRoutes } from './routes/cluster-routes.js';
import { consoleRoutes } from './routes/console-routes.js';
import { importRoutes } from './routes/import-routes.js';
import { queryRoutes } from './routes/query-routes.js';
import { schemaRoutes } from './routes/schema-routes.js';
import { internalRoutes } from './routes/internal-routes.js';
import { historyRoutes } from './routes/history-routes.js';
import { backupRoutes } from './routes/backup-routes.js';
import { exportRoutes } from './routes/export-routes.js';
import { legacyFrameRoutes, legacyIndexOptions } from './routes/legacy-frame-routes.js';
import { legacyInputRoutes } from './routes/legacy-input-routes.js';
import { legacyClusterRoutes } from './routes/legacy-cluster-routes.js';
import { legacyImportRoutes } from './routes/legacy-import-routes.js';
import { legacyReleaseRoutes } from './routes/legacy-release-routes.js';

/** Content types of request bodies (PQL, JSON, protobuf, curl's form default): see buildHttpApp. */
const NAMED_BODY_TYPES = [
  'text/plain',
  'application/json',
  'application/x-protobuf',
  'application/protobuf',
  'application/octet-stream',
  'application/x-www-form-urlencoded',
];

/** One module's routes over the context: registered as a plugin, in a scope of its own. */
type RouteModule = (app: FastifyInstance, ctx: HttpContext) => void;

const ROUTE_MODULES: readonly RouteModule[] = [
  schemaRoutes,
  clusterRoutes,
  queryRoutes,
  importRoutes,
  internalRoutes,
  historyRoutes,
  backupRoutes,
  exportRoutes,
  legacyFrameRoutes,
  legacyInputRoutes,
  legacyClusterRoutes,
  legacyImportRoutes,
  consoleRoutes,
];

/** A route module as a fastify plugin (named after it, as fastify's plugin tree shows it). */
export function routePlugin(routes: RouteModule): FastifyPluginAsync<{ ctx: HttpContext }> {
  return scopedPlugin<{ ctx: HttpContext }>(routes.name, async (scope, { ctx }) => routes(scope, ctx));
}

/** TLS and the request checks of security.ts; none: plain http, no checks (tests, tools). */
export interface HttpSecurity {
  https?: { key: Buffer; cert: Buffer };
  checks?: SecurityOptions;
}

/**
 * The server's bound on receiving a request, headers and body (--request-body-timeout): Node
 * answers 408 and closes the connection. Node checks open connections only every
 * connectionsCheckingInterval (30 s by default), so it is kept to a quarter of the bound.
 */
export function requestTimeouts(ms: number): {
  requestTimeout: number;
  http: { connectionsCheckingInterval: number; headersTimeout: number };
} {
  const check = Math.max(100, Math.min(30_000, Math.floor(ms / 4)));
  return {
    requestTimeout: ms,
    http: { connectionsCheckingInterval: check, headersTimeout: ms > 0 ? Math.min(60_000, ms) : 60_000 },
  };
}

export function buildHttpApp(
  ctx: HttpContext,
  logger: Logger,
  onInvariantBroken: (err: Error) => void,
  bodyLimit: number = LIMITS.maxBodyBytes,
  security: HttpSecurity = {},
  requestTimeoutMs = 60_000,
  /**
   * What the integrations contribute (Kafka, the cluster: src/server-http.ts), registered before
   * the route modules so that hooks meant for every route reach them.
   */
  contributed: readonly FastifyPluginAsync[] = [],
  /** Requests answered before fastify's routing, over plain http (front-door.ts). */
  front?: FrontDoors,
): FastifyInstance {
  // With `https` fastify serves TLS; its instance type then names an https.Server, which routes
  // never touch, so it is used as the plain instance type.
  const app = Fastify({
    ...(security.https === undefined ? {} : { https: security.https }),
    ...(security.https === undefined && front !== undefined ? { serverFactory: front.serverFactory() } : {}),
    // No logger instance: with one, fastify makes a pino child and puts two listeners on the
    // response of every request (request-log.ts); req.log is a RequestLog instead.
    childLoggerFactory: requestLogs(logger),
    // Per-request access logs would cost more than the requests themselves on the hot paths.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    // Keep-alive clients must not be cut off between bench iterations.
    keepAliveTimeout: 65_000,
    return503OnClosing: true,
    // A body that arrives slowly holds its connection this long at most, then 408.
    ...requestTimeouts(requestTimeoutMs),
  }) as unknown as FastifyInstance;
  // pino's Logger is a FastifyBaseLogger at run time; plugins' instances inherit it.
  app.log = logger as FastifyBaseLogger;
  // Every body is read as bytes; handlers decode JSON, PQL or protobuf as the route requires.
  app.removeAllContentTypeParsers();
  const asBytes = (_req: unknown, body: Buffer | string, done: (err: null, body: Buffer | string) => void): void =>
    done(null, body);
  // The same parser under the types clients send, then for any other: fastify keeps the parser it
  // found by name in a cache keyed by the Content-Type, while a body that only the catch-all
  // matches has its Content-Type parsed again on every request.
  for (const type of NAMED_BODY_TYPES) app.addContentTypeParser(type, { parseAs: 'buffer' }, asBytes);
  app.addContentTypeParser('*', { parseAs: 'buffer' }, asBytes);
  installErrorHandler(app, onInvariantBroken);
  if (security.checks !== undefined) {
    const checks = installSecurity(app, security.checks);
    // The lean query path runs the same checks (lean-query.ts).
    if (front !== undefined) front.checks = checks;
  }
  // The lean query path stops taking requests once the app closes: fastify answers 503 then.
  if (front !== undefined) app.addHook('preClose', (done) => front.close(done));
  // Options the 0.x variants add to other modules' routes: installed before any route exists.
  legacyIndexOptions(app, ctx);
  legacyReleaseRoutes(app, ctx, ctx.legacyRelease ?? '');
  for (const plugin of contributed) app.register(plugin);
  for (const routes of ROUTE_MODULES) app.register(routePlugin(routes), { ctx });
  return app;
}
