// Composition root: open storage → bootstrap → engine → services → HTTP (and Kafka when
// configured). Returns a handle that main.ts (or a test) listens with and closes.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type Config, parseBind } from './config/config.js';
import { Engine } from './engine/engine.js';
import { bootstrap } from './engine/bootstrap.js';
import { recalculateCaches } from './executor/index.js';
import { buildHttpApp } from './http/app.js';
import type { NodeInfo } from './http/context.js';
import { KafkaRuntime, replicaReadOnlyReason } from './kafka/index.js';
import { ImportService } from './service/import/import-service.js';
import { QueryService } from './service/query-service.js';
import { SchemaService } from './service/schema-service.js';
import { EventLog, SnapshotStore, ensureDataDir, nodeId } from './storage/index.js';
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
  await ensureDataDir(cfg.dataDir);
  // The log's LevelDB handle is the data directory lock: take it before anything else writes.
  const log = await EventLog.open(cfg.dataDir, { fsync: cfg.fsync, fsyncIntervalMs: cfg.fsyncIntervalMs, logger });
  let engine: Engine | undefined;
  let kafka: KafkaRuntime;
  let id: string;
  try {
    id = await nodeId(cfg.dataDir);
    const snapshots = await SnapshotStore.open(cfg.dataDir, logger);
    const { holder } = await bootstrap(log, snapshots, logger);
    // A replica (--replica-of) applies only what it consumes: local writes are refused.
    const readOnly = cfg.replicaOf !== '' ? { readOnlyReason: replicaReadOnlyReason(cfg.replicaOf) } : {};
    engine = new Engine(holder, log, snapshots, { snapshotEveryEvents: cfg.snapshotEveryEvents, snapshotEveryBytes: cfg.snapshotEveryBytes, ...readOnly }, logger, onFatal);
    const kafkaCfg = { brokers: cfg.kafkaBrokers, mirrorTopic: cfg.kafkaMirrorTopic, replicaOf: cfg.replicaOf, mirrorAck: cfg.kafkaMirrorAck, mirrorAckTimeoutMs: cfg.kafkaMirrorAckTimeoutMs };
    kafka = await KafkaRuntime.open(kafkaCfg, engine, new ImportService(engine), id, logger, onFatal);
  } catch (err) {
    await log.close();
    throw err;
  }
  const eng = engine;
  const bind = parseBind(cfg.bind);
  let port = bind.port;
  const node = (): NodeInfo => ({ id, scheme: 'http', host: bind.host === '0.0.0.0' ? 'localhost' : bind.host, port });
  const recalc = (): void => recalculateCaches(eng.holder);
  const app = buildHttpApp(
    // kafka: mirror/replica/ingest routes and their /status extras.
    { engine: eng, schema: new SchemaService(eng), query: new QueryService(eng, cfg.legacyRelease), imports: new ImportService(eng), node, version: VERSION, recalculateCaches: recalc, kafka, statusExtras: () => kafka.statusExtras(), legacyRelease: cfg.legacyRelease },
    logger,
    onFatal,
    cfg.maxBodyBytes,
  );
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
      logger.info({ bind: `${bind.host}:${port}`, dataDir: cfg.dataDir, fsync: cfg.fsync }, 'bitledger listening');
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
