// Composition root: storage (server-storage.ts) → engine (server-engine.ts) → integrations,
// Kafka and the cluster (server-integrations.ts) → HTTP app (server-http.ts), each adding how to
// stop it to one stop list (stop-list.ts) that close() runs backwards. createServer() returns a
// booted handle that a test listens with and closes; launchServer() (the process entry) listens first and boots behind the socket, so /health,
// /ready, /status and /metrics answer while a long replay runs.
import {
  type Server as HttpServer,
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { type Server as HttpsServer, createServer as createHttpsServer } from 'node:https';
import type { FastifyInstance } from 'fastify';
import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import type { SinkFactory } from './cluster/membership/runtime.js';
import { clusterSettings } from './cluster/settings.js';
import { type Config, ConfigError, parseBind } from './config/config.js';
import type { Engine } from './engine/engine.js';
import { deferredFragments, warmUp } from './engine/warm-up.js';
import { warmImportPath } from './http/import-warmup.js';
import { runStepsYielding } from './util/steps.js';
import { requestTimeouts } from './http/app.js';
import type { NodeInfo } from './http/context.js';
import { startupHandler } from './http/startup-handler.js';
import { ServerMetrics } from './metrics/server-metrics.js';
import { type EngineOptions, openEngine } from './server-engine.js';
import type { FrontDoors } from './http/front-door.js';
import { type RequestHandler, buildServerApp, httpSecurity } from './server-http.js';
import { openIntegrations, startIntegrations } from './server-integrations.js';
import { openStorage } from './server-storage.js';
import { reserveBelowFloor } from './storage/disk-space.js';
import { type Boot, StopList } from './stop-list.js';
import { QueryWorkers } from './service/query-workers/pool.js';
import { tuneAllocator } from './util/heap-trim.js';
import { keepTickShape } from './util/tick-shape.js';

export interface Server {
  app: FastifyInstance;
  engine: Engine;
  metrics: ServerMetrics;
  /** The query worker threads (--query-workers), if more than one. */
  queryWorkers?: QueryWorkers;
  /** Node's request handler for a server of one's own (launchServer): the app behind its front door. */
  serve: RequestHandler;
  /** What answers before fastify's routing (http/front-door.ts). */
  front: FrontDoors;
  /** Starts listening on cfg.bind; resolves with the bound port. */
  listen(): Promise<number>;
  /** Graceful: stop accepting, finish in-flight requests, flush the log, close the database. */
  close(): Promise<void>;
}

export interface BootOptions extends EngineOptions {
  metrics?: ServerMetrics;
  /** A socket already listening (launchServer): the app is served through it. */
  listening?: { http: HttpServer | HttpsServer; port: number };
  /**
   * Cluster mode (--cluster-name): a test of membership alone passes a sink of its own; the
   * node's command applier otherwise.
   */
  clusterSink?: SinkFactory;
  /** A lower floor of --disk-reserve-bytes (test hook; default DISK_RESERVE_FLOOR). */
  diskReserveFloor?: number;
}

export async function createServer(
  cfg: Config,
  logger: Logger,
  onFatal: (err: Error) => void,
  opts: BootOptions = {},
): Promise<Server> {
  tuneAllocator();
  keepTickShape();
  // Bad TLS or token files, and contradictory cluster flags, stop the start before anything is opened.
  const bind = parseBind(cfg.bind);
  const security = httpSecurity(cfg, bind.host);
  const clusterCfg = clusterSettings(cfg);
  const metrics = opts.metrics ?? new ServerMetrics();
  refuseSmallReserve(cfg, opts.diskReserveFloor);
  const stops = new StopList();
  try {
    const boot: Boot = { cfg, logger, onFatal, stops };
    const storage = await openStorage(boot);
    const engine = await openEngine(boot, storage, metrics, { cluster: clusterCfg !== undefined }, opts);
    const workers = startQueryWorkers(cfg, clusterCfg !== undefined, engine, logger);
    if (workers !== undefined) stops.add('query workers', () => workers.close());
    const integrations = await openIntegrations(boot, clusterCfg, engine, storage.id, opts.clusterSink);
    // The snapshot's fragments are decoded on first touch; the rest in the background once the
    // server is assembled, until the engine stops.
    let warming: Promise<unknown> = Promise.resolve();
    stops.add('engine', async () => {
      await engine.stop();
      await warming;
    });
    metrics.attach({ engine, kafka: integrations.kafka, ...(workers !== undefined ? { queryWorkers: workers } : {}) });
    const at: Address = { scheme: security.https === undefined ? 'http' : 'https', host: bind.host, port: bind.port };
    if (opts.listening !== undefined) at.port = opts.listening.port;
    const node = (): NodeInfo => ({ id: storage.id, ...at, host: at.host === '0.0.0.0' ? 'localhost' : at.host });
    const parts = { engine, integrations, metrics, security, node, ...(workers !== undefined ? { workers } : {}) };
    const { app, recalculate, serve, front } = buildServerApp(boot, parts);
    const http = opts.listening?.http;
    stops.add('http', () => closeApp(app, http));
    const started = startIntegrations(integrations, stops);
    const timer = setInterval(recalculate, cfg.cacheRecalcIntervalMs);
    timer.unref();
    stops.add('cache recalculation', () => clearInterval(timer));
    warming = warmUp(engine.peekApplied(deferredFragments), () => engine.state !== 'NORMAL', logger, engine.clock);
    // The advertised URL needs the bound port: a node that listens already joins now, else at listen().
    const join = (): Promise<void> => started.join({ ...at });
    if (http !== undefined) void join().catch((err: unknown) => onFatal(toError(err)));
    const listen = async (): Promise<number> => {
      if (http === undefined) await listenApp(app, at, cfg, logger, join);
      return at.port;
    };
    return {
      app,
      serve,
      front,
      engine,
      metrics,
      ...(workers !== undefined ? { queryWorkers: workers } : {}),
      listen,
      close: () => stops.stopAll(),
    };
  } catch (err) {
    await stops.stopAll().catch(() => undefined);
    throw err;
  }
}

/**
 * The query worker threads (--query-workers; 0: one per core), started on the replayed state,
 * which is durable: no write has been taken yet. They come up in the background; queries run on
 * the request thread until they are. None with one thread, and none in cluster mode,
 * whose reads are the cluster's fan-out.
 */
function startQueryWorkers(cfg: Config, clustered: boolean, engine: Engine, logger: Logger): QueryWorkers | undefined {
  const n = cfg.queryWorkers > 0 ? cfg.queryWorkers : availableParallelism();
  if (n <= 1 || clustered) return undefined;
  const workers = QueryWorkers.start(n, engine.publisher, logger);
  // Publications are handed over as groups become durable, not only before queries: a worker
  // that lagged would keep every superseded row's bytes alive.
  engine.committedLog.onDurable(() => workers.publish());
  return workers;
}

function refuseSmallReserve(cfg: Config, floor: number | undefined): void {
  const belowFloor = reserveBelowFloor(cfg.diskReserveBytes, floor);
  if (belowFloor !== undefined) throw new ConfigError(belowFloor);
}

/** Where this node serves: the port is the bound one once listening (cfg.bind's may be 0). */
interface Address {
  scheme: string;
  host: string;
  port: number;
}

/** Listens on `at` (the port it binds is written back), then joins the cluster (if any). */
async function listenApp(
  app: FastifyInstance,
  at: Address,
  cfg: Config,
  logger: Logger,
  join: () => Promise<void>,
): Promise<void> {
  await app.listen({ host: at.host, port: at.port });
  const addr = app.server.address();
  if (addr !== null && typeof addr === 'object') at.port = addr.port;
  await join();
  const fields = { auth: cfg.authTokenFile !== '', dataDir: cfg.dataDir, fsync: cfg.fsync };
  logger.info({ bind: `${at.scheme}://${at.host}:${at.port}`, ...fields }, 'bitledger listening');
}

/** Stops accepting, finishes the requests in flight, and closes the socket a launch opened. */
async function closeApp(app: FastifyInstance, http: HttpServer | HttpsServer | undefined): Promise<void> {
  const socketClosed = http !== undefined ? closeHttp(http) : Promise.resolve();
  await app.close();
  http?.closeAllConnections();
  await socketClosed;
}

export interface Launch {
  port: number;
  /** Resolves once replay is done and the full API is served; rejects if the boot fails. */
  booted: Promise<Server>;
}

/** Listens on cfg.bind first, then boots behind the socket (answering "starting" meanwhile). */
export async function launchServer(
  cfg: Config,
  logger: Logger,
  onFatal: (err: Error) => void,
  opts: Pick<BootOptions, 'onReplayProgress' | 'commitTestHooks' | 'diskReserveFloor'> = {},
): Promise<Launch> {
  const metrics = new ServerMetrics();
  const bind = parseBind(cfg.bind);
  // Bad TLS or token files, or a reserve below the floor, stop the start before the port is taken.
  const { https } = httpSecurity(cfg, bind.host);
  refuseSmallReserve(cfg, opts.diskReserveFloor);
  let handler: (req: IncomingMessage, res: ServerResponse) => void = startupHandler(metrics);
  const t = requestTimeouts(cfg.requestBodyTimeout);
  const timeouts = { ...t.http, requestTimeout: t.requestTimeout };
  const http =
    https === undefined
      ? createHttpServer(timeouts, (req, res) => handler(req, res))
      : createHttpsServer({ ...https, ...timeouts }, (req, res) => handler(req, res));
  // Keep-alive clients must not be cut off between bench iterations (as fastify's own server).
  http.keepAliveTimeout = 65_000;
  const port = await listenOn(http, bind.host, bind.port);
  logger.info(
    { bind: `${bind.host}:${port}`, dataDir: cfg.dataDir, fsync: cfg.fsync },
    'bitledger listening (starting: replaying the log)',
  );
  const booted = createServer(cfg, logger, onFatal, { ...opts, metrics, listening: { http, port } }).then(
    async (server) => {
      await server.app.ready();
      handler = server.serve;
      logger.info({ seq: server.engine.committedLog.durableSeq }, 'bitledger ready');
      // In the background, a slice at a time: requests are answered meanwhile.
      void runStepsYielding(warmImportPath()).catch((err: unknown) =>
        logger.warn({ err }, 'import path warm-up failed; the first imports compile it'),
      );
      return server;
    },
    async (err: unknown) => {
      http.closeAllConnections();
      await closeHttp(http);
      throw err;
    },
  );
  return { port, booted };
}

function listenOn(http: HttpServer | HttpsServer, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      const why =
        err.code === 'EADDRINUSE'
          ? 'address already in use'
          : err.code === 'EACCES'
            ? 'permission denied'
            : err.code === 'EADDRNOTAVAIL'
              ? 'address not available on this host'
              : err.message;
      reject(new ConfigError(`cannot listen on ${host}:${port}: ${why}`));
    };
    http.once('error', onError);
    http.listen(port, host, () => {
      http.off('error', onError);
      const addr = http.address();
      resolve(addr !== null && typeof addr === 'object' ? addr.port : port);
    });
  });
}

function closeHttp(http: HttpServer | HttpsServer): Promise<void> {
  return new Promise((resolve) => http.close(() => resolve()));
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
