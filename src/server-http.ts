// Composition, step 4: the HTTP app — the services over the engine (cluster mode: the cluster's,
// which write through Kafka), the routes' context, the plugins Kafka and the cluster contribute,
// and the operational hooks and routes (metrics, access log, health, readiness).
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { type Config, ConfigError } from './config/config.js';
import type { Engine } from './engine/engine.js';
import { recalculateCaches } from './executor/index.js';
import { type HttpSecurity, buildHttpApp } from './http/app.js';
import type { HttpContext, NodeInfo } from './http/context.js';
import { localTopology } from './http/topology.js';
import { installOpsHooks } from './http/ops-hooks.js';
import { FrontDoors } from './http/front-door.js';
import { leanQuery } from './http/lean-query.js';
import type { RequestOps } from './http/request-ops.js';
import { readiness } from './http/readiness.js';
import { opsRoutes } from './http/routes/ops-routes.js';
import { readTokenFile } from './http/security.js';
import { kafkaPlugins } from './kafka/http-routes.js';
import type { ServerMetrics } from './metrics/server-metrics.js';
import type { Integrations } from './server-integrations.js';
import type { Boot } from './stop-list.js';
import { ImportService } from './service/import/import-service.js';
import { QueryService } from './service/query-service.js';
import type { QueryWorkers } from './service/query-workers/pool.js';
import { SchemaService } from './service/schema-service.js';
import { VERSION } from './version.js';

/** Node's request handler: the app's routing, behind its front door (http/front-door.ts). */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface HttpParts {
  engine: Engine;
  /** The query worker threads (--query-workers), if more than one. */
  workers?: QueryWorkers;
  integrations: Integrations;
  metrics: ServerMetrics;
  security: HttpSecurity;
  node: () => NodeInfo;
}

export function buildServerApp(
  { cfg, logger, onFatal }: Boot,
  p: HttpParts,
): { app: FastifyInstance; recalculate: () => void; serve: RequestHandler; front: FrontDoors } {
  const { engine: eng, integrations, metrics } = p;
  const { kafka, cluster } = integrations;
  const recalculate = (): void => eng.peekApplied(recalculateCaches);
  const ready = () => readiness(eng, kafka);
  // /status keeps Pilosa's shape; a node that is not ready says so (DEGRADED with the reason).
  const statusExtras = (): Record<string, unknown> => {
    const r = ready();
    return {
      ...kafka.statusExtras(),
      // Cluster mode: every member, and the cluster's state (DEGRADED while a partition has no
      // caught-up holder), in Pilosa's shape.
      ...(cluster !== undefined && eng.state === 'NORMAL' ? cluster.statusExtras() : {}),
      ...(eng.state !== 'NORMAL' ? {} : r.ready ? degradedExtras(r.degraded) : { state: 'DEGRADED', reason: r.reason }),
    };
  };
  const bounds = {
    queryTimeoutMs: cfg.queryTimeout,
    maxResultRows: cfg.maxResultRows,
    maxResultBytes: cfg.maxResultBytes,
    maxQueryMemory: cfg.maxQueryMemory,
  };
  const imports = new ImportService(eng);
  const context: HttpContext = {
    engine: eng,
    schema: new SchemaService(eng),
    query: new QueryService(eng, bounds, cfg.legacyRelease, p.workers),
    imports,
    node: p.node,
    version: VERSION,
    recalculateCaches: recalculate,
    statusExtras,
    topology: localTopology(kafka.replica !== undefined ? 'replica' : 'single', eng, imports, p.node),
    legacyRelease: cfg.legacyRelease,
    ...(cluster !== undefined ? cluster.httpContext() : {}),
  };
  // Kafka's plugins (ingests, mirror and replica gauges, their hooks) and the cluster's are
  // registered by the HTTP app beside its own: http/ and kafka/ do not import each other.
  const contributed = [...kafkaPlugins(kafka), ...(cluster?.plugins() ?? [])];
  const front = new FrontDoors();
  const app = buildHttpApp(
    context,
    logger,
    onFatal,
    cfg.maxBodyBytes,
    p.security,
    cfg.requestBodyTimeout,
    contributed,
    front,
  );
  const ops = installOpsHooks(app, {
    metrics,
    logger,
    accessLogPerSecond: cfg.accessLogPerSecond,
    slowQueryMs: cfg.slowQueryMs,
  });
  opsRoutes(app, metrics, ready, () => eng.state);
  // Not where integrations or the 0.x release hook the query route themselves (lean-query.ts).
  const hooked = kafka.mirrorAck === 'kafka' || kafka.replica !== undefined || cluster !== undefined;
  if (!hooked && (cfg.legacyRelease ?? '') === '') openLeanQuery(front, context, ops, { cfg, logger, onFatal });
  return { app, recalculate, serve: front.serve(app.routing), front };
}

/** The lean query path (lean-query.ts): what the query route and the ops hooks do for plain queries. */
function openLeanQuery(front: FrontDoors, context: HttpContext, ops: RequestOps, b: Omit<Boot, 'stops'>): void {
  front.open(
    leanQuery({
      query: context.query,
      ops,
      checks: front.checks,
      bodyLimit: b.cfg.maxBodyBytes,
      logger: b.logger,
      onInvariantBroken: b.onFatal,
    }),
  );
}

/** TLS files and the request checks from the settings (README "Securing bitledger"). */
export function httpSecurity(cfg: Config, bindHost: string): HttpSecurity {
  if ((cfg.tlsCertificate === '') !== (cfg.tlsKey === ''))
    throw new ConfigError('tls-certificate and tls-key go together: set both or neither');
  const https =
    cfg.tlsCertificate === '' ? undefined : { cert: readFileSync(cfg.tlsCertificate), key: readFileSync(cfg.tlsKey) };
  const tokens = cfg.authTokenFile === '' ? undefined : readTokenFile(cfg.authTokenFile);
  return {
    https,
    checks: { bindHost, scheme: https === undefined ? 'http' : 'https', allowedOrigins: cfg.allowedOrigins, tokens },
  };
}

/** /status of a node that serves but has something to say (a mirror retrying behind local acks). */
function degradedExtras(reason: string | undefined): Record<string, unknown> {
  return reason === undefined ? {} : { state: 'DEGRADED', reason };
}
