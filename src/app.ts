// Composition root: open storage → bootstrap → engine → services → HTTP (and Kafka when
// configured). Returns a handle that main.ts (or a test) listens with and closes.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { readFileSync } from 'node:fs';
import { type Config, ConfigError, parseBind } from './config/config.js';
import { Engine } from './engine/engine.js';
import { bootstrap } from './engine/bootstrap.js';
import { recalculateCaches } from './executor/index.js';
import { type HttpSecurity, buildHttpApp } from './http/app.js';
import { readTokenFile } from './http/security.js';
import type { NodeInfo } from './http/context.js';
import { kafkaRoutes } from './kafka/http-routes.js';
import { KafkaRuntime, replicaReadOnlyReason } from './kafka/index.js';
import { ImportService } from './service/import/import-service.js';
import { QueryService } from './service/query-service.js';
import { SchemaService } from './service/schema-service.js';
import { EventLog, SnapshotStore, ensureDataDir, nodeId } from './storage/index.js';
import { DiskSpace, keepReserve, releaseReserveIfShort } from './storage/disk-space.js';
import { VERSION } from './version.js';

export interface Server {
  app: FastifyInstance;
  engine: Engine;
  /** Starts listening on cfg.bind; resolves with the bound port. */
  listen(): Promise<number>;
  /** Graceful: stop accepting, finish in-flight requests, flush the log, close the database. */
  close(): Promise<void>;
}

export async function createServer(cfg: Config, logger: Logger, onFatal: (err: Error) => void): Promise<Server> {
  // Bad TLS or token files stop the start before anything is opened.
  const security = httpSecurity(cfg, parseBind(cfg.bind).host);
  await ensureDataDir(cfg.dataDir);
  await releaseReserveIfShort(cfg.dataDir, cfg.diskReserveBytes, logger);
  // The log's LevelDB handle is the data directory lock: take it before anything else writes.
  const log = await EventLog.open(cfg.dataDir, { fsync: cfg.fsync, fsyncIntervalMs: cfg.fsyncIntervalMs, logger, acceptDataLoss: cfg.acceptDataLoss });
  let engine: Engine | undefined;
  let kafka: KafkaRuntime;
  let id: string;
  try {
    id = await nodeId(cfg.dataDir);
    const snapshots = await SnapshotStore.open(cfg.dataDir, logger);
    const { holder } = await bootstrap(log, snapshots, logger);
    // A replica (--replica-of) applies only what it consumes: local writes are refused.
    const readOnly = cfg.replicaOf !== '' ? { readOnlyReason: replicaReadOnlyReason(cfg.replicaOf) } : {};
    await keepReserve(cfg.dataDir, cfg.diskReserveBytes, logger);
    const diskSpace = await DiskSpace.open(cfg.dataDir, cfg.diskReserveBytes);
    engine = new Engine(holder, log, snapshots, { snapshotEveryEvents: cfg.snapshotEveryEvents, snapshotEveryBytes: cfg.snapshotEveryBytes, ...readOnly, diskSpace }, logger, onFatal);
    const kafkaCfg = { brokers: cfg.kafkaBrokers, mirrorTopic: cfg.kafkaMirrorTopic, replicaOf: cfg.replicaOf, mirrorAck: cfg.kafkaMirrorAck };
    kafka = await KafkaRuntime.open(kafkaCfg, engine, new ImportService(engine), id, logger, onFatal);
  } catch (err) {
    await log.close();
    throw err;
  }
  const eng = engine;
  const bind = parseBind(cfg.bind);
  let port = bind.port;
  const scheme = security.https === undefined ? 'http' : 'https';
  const node = (): NodeInfo => ({ id, scheme, host: bind.host === '0.0.0.0' ? 'localhost' : bind.host, port });
  const recalc = (): void => eng.peekApplied(recalculateCaches);
  const app = buildHttpApp(
    { engine: eng, schema: new SchemaService(eng), query: new QueryService(eng, { queryTimeoutMs: cfg.queryTimeoutMs, maxResultRows: cfg.maxResultRows }), imports: new ImportService(eng), node, version: VERSION, recalculateCaches: recalc, statusExtras: () => kafka.statusExtras() },
    logger,
    onFatal,
    cfg.maxBodyBytes,
    security,
  );
  // Kafka's routes (ingests, mirror and replica gauges) sit beside the HTTP app's: http/ and
  // kafka/ do not import each other.
  kafkaRoutes(app, kafka);
  const timer = setInterval(recalc, cfg.cacheRecalcIntervalMs);
  timer.unref();
  kafka.start();
  return {
    app,
    engine: eng,
    async listen() {
      await app.listen({ host: bind.host, port: bind.port });
      const addr = app.server.address();
      if (addr !== null && typeof addr === 'object') port = addr.port;
      logger.info({ bind: `${scheme}://${bind.host}:${port}`, auth: cfg.authTokenFile !== '', dataDir: cfg.dataDir, fsync: cfg.fsync }, 'bitledger listening');
      return port;
    },
    async close() {
      clearInterval(timer);
      await kafka.stopConsumers(); // no more writes from Kafka while the rest stops
      await app.close();
      await eng.stop();
      await kafka.close(); // the mirror gets a moment to publish the tail
      await log.close();
    },
  };
}

/** TLS files and the request checks from the settings (README "Securing bitledger"). */
function httpSecurity(cfg: Config, bindHost: string): HttpSecurity {
  if ((cfg.tlsCertificate === '') !== (cfg.tlsKey === '')) throw new ConfigError('tls-certificate and tls-key go together: set both or neither');
  const https = cfg.tlsCertificate === '' ? undefined : { cert: readFileSync(cfg.tlsCertificate), key: readFileSync(cfg.tlsKey) };
  const tokens = cfg.authTokenFile === '' ? undefined : readTokenFile(cfg.authTokenFile);
  return { https, checks: { bindHost, scheme: https === undefined ? 'http' : 'https', allowedOrigins: cfg.allowedOrigins, tokens } };
}
