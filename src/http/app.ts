// The fastify application, built apart from listen() so tests can inject().
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { LIMITS } from '../config/limits.js';
import { kafkaRoutes } from '../kafka/index.js';
import type { HttpContext } from './context.js';
import { installErrorHandler } from './errors.js';
import { clusterRoutes } from './routes/cluster-routes.js';
import { importRoutes } from './routes/import-routes.js';
import { queryRoutes } from './routes/query-routes.js';
import { schemaRoutes } from './routes/schema-routes.js';
import { internalRoutes } from './routes/internal-routes.js';
import { exportRoutes } from './routes/export-routes.js';
import { legacyFrameRoutes } from './routes/legacy-frame-routes.js';
import { legacyInputRoutes } from './routes/legacy-input-routes.js';
import { legacyClusterRoutes } from './routes/legacy-cluster-routes.js';
import { legacyImportRoutes } from './routes/legacy-import-routes.js';
import { legacyReleaseRoutes } from './routes/legacy-release-routes.js';

export function buildHttpApp(ctx: HttpContext, logger: Logger, onInvariantBroken: (err: Error) => void, bodyLimit: number = LIMITS.maxBodyBytes): FastifyInstance {
  const app = Fastify({
    // pino's Logger is a FastifyBaseLogger at run time; the generic parameter would otherwise
    // leak pino's type into every route signature.
    loggerInstance: logger as FastifyBaseLogger,
    // Per-request access logs would cost more than the requests themselves on the hot paths.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    // Keep-alive clients must not be cut off between bench iterations.
    keepAliveTimeout: 65_000,
    return503OnClosing: true,
  });
  // Every body is read as bytes; handlers decode JSON, PQL or protobuf as the route requires.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  installErrorHandler(app, onInvariantBroken);
  schemaRoutes(app, ctx);
  clusterRoutes(app, ctx);
  queryRoutes(app, ctx);
  importRoutes(app, ctx);
  internalRoutes(app, ctx);
  exportRoutes(app, ctx);
  legacyFrameRoutes(app, ctx);
  legacyInputRoutes(app, ctx);
  legacyClusterRoutes(app, ctx);
  legacyImportRoutes(app, ctx);
  legacyReleaseRoutes(app, ctx, ctx.legacyRelease ?? '');
  if (ctx.kafka) kafkaRoutes(app, ctx.kafka);
  return app;
}
