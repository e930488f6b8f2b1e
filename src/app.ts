// Composition root: open storage → bootstrap → engine → services → HTTP (and Kafka when
// configured). createServer() returns a booted handle that a test listens with and closes;
// launchServer() (the process entry) listens first and boots behind the socket, so /health,
// /ready, /status and /metrics answer while a long replay runs.
import { tuneAllocator } from './util/heap-trim.js';
import {
  type Server as HttpServer,
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { readFileSync } from 'node:fs';
import { type Server as HttpsServer, createServer as createHttpsServer } from 'node:https';
import { systemClock } from './util/clock.js';
import { type Config, ConfigError, parseBind } from './config/config.js';
import type { CommitTestHooks } from './config/test-hooks.js';
import { Engine } from './engine/engine.js';
import { type ReplayProgressListener, bootstrap } from './engine/bootstrap.js';
import { deferredFragments, warmUp } from './engine/warm-up.js';
import { recalculateCaches } from './executor/index.js';
import { type HttpSecurity, buildHttpApp, requestTimeouts } from './http/app.js';
import { readTokenFile } from './http/security.js';
import type { NodeInfo } from './http/context.js';
import { kafkaRoutes } from './kafka/http-routes.js';
import { installOpsHooks } from './http/ops-hooks.js';
import { readiness } from './http/readiness.js';
import { opsRoutes } from './http/routes/ops-routes.js';
import { startupHandler } from './http/startup-handler.js';
import { KafkaRuntime, replicaReadOnlyReason } from './kafka/index.js';
import type { SinkFactory } from './cluster/membership/runtime.js';
import { clusterSettings } from './cluster/settings.js';
import { CLUSTER_LOCAL_WRITE_REASON } from './cluster/commands/local-writes.js';
import type { ClusterNode } from './cluster/node.js';
import { ServerMetrics } from './metrics/server-metrics.js';
import { ImportService } from './service/import/import-service.js';
import { QueryService } from './service/query-service.js';
import { SchemaService } from './service/schema-service.js';
import { EventLog, SnapshotStore, ensureDataDir, nodeId } from './storage/index.js';
import { DiskSpace, keepReserve, releaseReserveIfShort } from './storage/disk-space.js';
import { VERSION } from './version.js';

export interface Server {
  app: FastifyInstance;
  engine: Engine;
  metrics: ServerMetrics;
  /** Starts listening on cfg.bind; resolves with the bound port. */
  listen(): Promise<number>;
  /** Graceful: stop accepting, finish in-flight requests, flush the log, close the database. */
  close(): Promise<void>;
}

export interface BootOptions {
  metrics?: ServerMetrics;
  /** A socket already listening (launchServer): the app is served through it. */
  listening?: { http: HttpServer | HttpsServer; port: number };
  /** Awaited after each replayed batch (tests use it to make a replay last). */
  onReplayProgress?: ReplayProgressListener;
  /**
   * Cluster mode (--cluster-name): a test of membership alone passes a sink of its own; the
   * node's command applier otherwise.
   */
  clusterSink?: SinkFactory;
  /** The commit queue's test hooks (src/config/test-hooks.ts). */
  commitTestHooks?: CommitTestHooks;
}

export async function createServer(
  cfg: Config,
  logger: Logger,
  onFatal: (err: Error) => void,
  opts: BootOptions = {},
): Promise<Server> {
  tuneAllocator();
  // Bad TLS or token files stop the start before anything is opened.
  const security = httpSecurity(cfg, parseBind(cfg.bind).host);
  // Contradictory cluster flags stop the start before anything is opened.
  const clusterCfg = clusterSettings(cfg);
  const metrics = opts.metrics ?? new ServerMetrics();
  await ensureDataDir(cfg.dataDir);
  await releaseReserveIfShort(cfg.dataDir, cfg.diskReserveBytes, logger);
  // The log's LevelDB handle is the data directory lock: take it before anything else writes.
  const log = await EventLog.open(cfg.dataDir, {
    fsync: cfg.fsync,
    fsyncIntervalMs: cfg.fsyncIntervalMs,
    logger,
    acceptDataLoss: cfg.acceptDataLoss,
  });
  let engine: Engine | undefined;
  let kafka: KafkaRuntime;
  let cluster: ClusterNode | undefined;
  let id: string;
  try {
    id = await nodeId(cfg.dataDir);
    const snapshots = await SnapshotStore.open(cfg.dataDir, logger);
    const progress: ReplayProgressListener = (done, total) => {
      Object.assign(metrics.replay, { phase: 'replay', done, total });
      return opts.onReplayProgress?.(done, total);
    };
    // A long suffix (a log built or copied without snapshots) leaves snapshots inside the history
    // window as it replays, so a first time-travel read there replays little.
    const checkpoints = {
      everyEvents: cfg.snapshotEveryEvents,
      sinceMs: systemClock.now() - cfg.historyRetention,
      files: snapshots,
    };
    const { holder } = await bootstrap(log, snapshots, logger, Infinity, progress, systemClock, checkpoints);
    metrics.replay.phase = 'done';
    // A replica (--replica-of) applies only what it consumes: local writes are refused.
    // A cluster node writes only what it applies from the cluster's topics: a route that does not
    // go through the cluster is refused instead of writing to this node alone.
    const readOnly =
      cfg.replicaOf !== ''
        ? { readOnlyReason: replicaReadOnlyReason(cfg.replicaOf) }
        : clusterCfg !== undefined
          ? { readOnlyReason: CLUSTER_LOCAL_WRITE_REASON }
          : {};
    await keepReserve(cfg.dataDir, cfg.diskReserveBytes, logger);
    const diskSpace = await DiskSpace.open(cfg.dataDir, cfg.diskReserveBytes);
    engine = new Engine(
      holder,
      log,
      snapshots,
      {
        snapshotEveryEvents: cfg.snapshotEveryEvents,
        snapshotEveryBytes: cfg.snapshotEveryBytes,
        history: { ms: cfg.historyRetention, bytes: cfg.historyRetentionBytes },
        ...readOnly,
        diskSpace,
        commitQueue: opts.commitTestHooks,
      },
      logger,
      onFatal,
    );
    const kafkaCfg = {
      brokers: cfg.kafkaBrokers,
      mirrorTopic: cfg.kafkaMirrorTopic,
      replicaOf: cfg.replicaOf,
      mirrorAck: cfg.kafkaMirrorAck,
      mirrorAckTimeoutMs: cfg.kafkaMirrorAckTimeout,
      // Cluster mode runs the cluster's ingests (below), never this node's alone.
      ...(clusterCfg !== undefined ? { ingestsRefused: 'cluster mode: ingests run through the cluster' } : {}),
    };
    kafka = await KafkaRuntime.open(kafkaCfg, engine, new ImportService(engine), id, logger, onFatal);
    // Loaded only in cluster mode: it brings kafkajs, which a start without Kafka does not load.
    if (clusterCfg !== undefined)
      cluster = await (await import('./cluster/node.js')).ClusterNode.open({
        cfg,
        engine,
        logger,
        nodeId: id,
        legacyRelease: cfg.legacyRelease,
        ...(opts.clusterSink !== undefined ? { sink: opts.clusterSink } : {}),
      });
    if (cluster !== undefined) kafka.useIngests(cluster.ingests);
  } catch (err) {
    await log.close();
    throw err;
  }
  const eng = engine;
  metrics.attach({ engine: eng, kafka });
  const bind = parseBind(cfg.bind);
  let port = opts.listening?.port ?? bind.port;
  const scheme = security.https === undefined ? 'http' : 'https';
  const node = (): NodeInfo => ({ id, scheme, host: bind.host === '0.0.0.0' ? 'localhost' : bind.host, port });
  const recalc = (): void => eng.peekApplied(recalculateCaches);
  const ready = () => readiness(eng, kafka);
  // /status keeps Pilosa's shape; a node that is not ready says so (DEGRADED with the reason).
  const statusExtras = (): Record<string, unknown> => {
    const r = ready();
    return {
      ...kafka.statusExtras(),
      // Cluster mode: every member, and the cluster's state (DEGRADED while a partition has no
      // caught-up holder), in Pilosa's shape.
      ...(cluster !== undefined && eng.state === 'NORMAL' ? cluster.statusExtras() : {}),
      ...(r.ready || eng.state !== 'NORMAL' ? {} : { state: 'DEGRADED', reason: r.reason }),
    };
  };
  const app = buildHttpApp(
    {
      engine: eng,
      schema: new SchemaService(eng),
      query: new QueryService(
        eng,
        {
          queryTimeoutMs: cfg.queryTimeout,
          maxResultRows: cfg.maxResultRows,
          maxResultBytes: cfg.maxResultBytes,
          maxQueryMemory: cfg.maxQueryMemory,
        },
        cfg.legacyRelease,
      ),
      imports: new ImportService(eng),
      node,
      version: VERSION,
      recalculateCaches: recalc,
      statusExtras,
      legacyRelease: cfg.legacyRelease,
      ...(cluster !== undefined ? cluster.httpContext() : {}),
    },
    logger,
    onFatal,
    cfg.maxBodyBytes,
    security,
    cfg.requestBodyTimeout,
  );
  // Kafka's routes (ingests, mirror and replica gauges) sit beside the HTTP app's: http/ and
  // kafka/ do not import each other.
  kafkaRoutes(app, kafka);
  cluster?.routes(app);
  installOpsHooks(app, { metrics, logger, accessLogPerSecond: cfg.accessLogPerSecond, slowQueryMs: cfg.slowQueryMs });
  opsRoutes(app, metrics, ready, () => eng.state);
  const timer = setInterval(recalc, cfg.cacheRecalcIntervalMs);
  timer.unref();
  kafka.start();
  // The snapshot's fragments are decoded on first touch; the rest in the background from here.
  const warming = warmUp(eng.peekApplied(deferredFragments), () => eng.state !== 'NORMAL', logger, eng.clock);
  const http = opts.listening?.http;
  // The advertised URL needs the bound port: a node that listens already joins now, else at listen().
  const joinCluster = async (): Promise<void> => cluster?.start({ scheme, host: bind.host, port });
  if (http !== undefined) void joinCluster().catch((err: unknown) => onFatal(toError(err)));
  return {
    app,
    engine: eng,
    metrics,
    async listen() {
      if (http !== undefined) return port;
      await app.listen({ host: bind.host, port: bind.port });
      const addr = app.server.address();
      if (addr !== null && typeof addr === 'object') port = addr.port;
      await joinCluster();
      logger.info(
        {
          bind: `${scheme}://${bind.host}:${port}`,
          auth: cfg.authTokenFile !== '',
          dataDir: cfg.dataDir,
          fsync: cfg.fsync,
        },
        'bitledger listening',
      );
      return port;
    },
    async close() {
      clearInterval(timer);
      // Hand this node's partitions over while it still answers, then leave the group.
      await cluster?.stop();
      await kafka.stopConsumers(); // no more writes from Kafka while the rest stops
      const socketClosed = http !== undefined ? closeHttp(http) : Promise.resolve();
      await app.close();
      http?.closeAllConnections();
      await socketClosed;
      await eng.stop();
      await warming;
      await kafka.close(); // the mirror gets a moment to publish the tail
      await log.close();
    },
  };
}

/** TLS files and the request checks from the settings (README "Securing bitledger"). */
function httpSecurity(cfg: Config, bindHost: string): HttpSecurity {
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
  opts: Pick<BootOptions, 'onReplayProgress' | 'commitTestHooks'> = {},
): Promise<Launch> {
  const metrics = new ServerMetrics();
  const bind = parseBind(cfg.bind);
  // Bad TLS or token files stop the start before the port is taken.
  const { https } = httpSecurity(cfg, bind.host);
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
      handler = server.app.routing;
      logger.info({ seq: server.engine.committedLog.durableSeq }, 'bitledger ready');
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
