// A real Apache Kafka broker for tests (docs/ARCHITECTURE.md: never a mock).
//
// acquireKafka() picks, in order:
//   (a) KAFKA_BROKERS (comma list) when set: an existing broker, left running on release();
//   (b) testcontainers with the apache/kafka image, only when a container runtime answers
//       within a few seconds (skipped quickly when there is no Docker socket at all);
//   (c) the ops/kafka launcher: Kafka's own jars from Maven Central run with the machine's java,
//       on a free 127.0.0.1 port in a temp run dir (fetch.sh, start.sh; release() runs stop.sh).
// If none works it throws: tests never skip Kafka, in CI or elsewhere.
//
// kafkaBrokersForTest() is what test files call: the brokers that the vitest globalSetup
// (test/helpers/kafka-global-setup.ts) provided for the whole run, or, when the file runs
// without that setup, a broker acquired for this file.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { repoPath } from '../../src/util/proto-path.js';
import { Kafka, logLevel } from 'kafkajs';
// Types only: this module is also loaded by the globalSetup in vitest's main process, where
// the runtime 'vitest' API is not meant to be used (see kafkaBrokersForTest).
import type {} from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Bootstrap brokers of the run's shared Kafka broker, set by kafka-global-setup.ts. */
    kafkaBrokers?: string[];
  }
}

export interface KafkaHandle {
  brokers: string[];
  /** Stops what acquireKafka started (nothing for KAFKA_BROKERS). Safe to call twice. */
  release(): Promise<void>;
}

/** The image used by the testcontainers branch; same Kafka line as ops/kafka/pom.xml. */
export const KAFKA_IMAGE = process.env.KAFKA_IMAGE ?? 'apache/kafka:4.4.0';

// Found by walking up to package.json, so it also works when compiled into dist/ (npm run bench).
const REPO_ROOT = path.dirname(repoPath(import.meta.url, 'package.json'));
const OPS_DIR = path.join(REPO_ROOT, 'ops', 'kafka');

const FETCH_TIMEOUT_MS = 10 * 60_000;
const START_TIMEOUT_S = 90;
const RUNTIME_PROBE_TIMEOUT_MS = 4_000;
const METADATA_TIMEOUT_MS = 30_000;

function log(message: string): void {
  process.stderr.write(`[kafka-broker] ${message}\n`);
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

interface RunResult {
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], opts: { timeoutMs: number; env?: NodeJS.ProcessEnv }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      {
        cwd: REPO_ROOT,
        env: opts.env ?? process.env,
        timeout: opts.timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: 16 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        if (err) {
          reject(new Error(`${path.basename(file)} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
        } else {
          resolve({ stdout, stderr });
        }
      },
    );
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A port that was free on 127.0.0.1 a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

/** Waits until the brokers answer a metadata request (describeCluster). */
export async function waitForMetadata(brokers: string[], timeoutMs = METADATA_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const admin = new Kafka({
      clientId: 'bitledger-test-probe',
      brokers,
      logLevel: logLevel.NOTHING,
      connectionTimeout: 2_000,
      requestTimeout: 5_000,
      retry: { retries: 0 },
    }).admin();
    try {
      await admin.connect();
      const cluster = await admin.describeCluster();
      if (cluster.brokers.length > 0 && cluster.controller !== null) return;
      last = new Error('no brokers/controller in metadata yet');
    } catch (err) {
      last = err;
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`Kafka at ${brokers.join(',')} did not answer metadata in ${timeoutMs} ms: ${errorMessage(last)}`);
}

// ---------------------------------------------------------------- (a) KAFKA_BROKERS

function fromEnv(): KafkaHandle | undefined {
  const list = (process.env.KAFKA_BROKERS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (list.length === 0) return undefined;
  return { brokers: list, release: async () => undefined };
}

// ---------------------------------------------------------------- (b) testcontainers

/** Cheap check first: is there anything a container runtime could be reached through? */
function containerRuntimeConceivable(): boolean {
  if (process.env.DOCKER_HOST) return true;
  const home = os.homedir();
  const candidates = [
    '/var/run/docker.sock',
    '/run/docker.sock',
    path.join(home, '.docker', 'run', 'docker.sock'),
    path.join(home, '.docker', 'desktop', 'docker.sock'),
    path.join(home, '.testcontainers.properties'),
  ];
  const xdg = process.env.XDG_RUNTIME_DIR;
  if (xdg) candidates.push(path.join(xdg, 'docker.sock'), path.join(xdg, 'podman', 'podman.sock'));
  return candidates.some((p) => existsSync(p));
}

async function fromTestcontainers(): Promise<KafkaHandle | undefined> {
  if (process.env.BITLEDGER_KAFKA_NO_CONTAINERS === '1') return undefined;
  if (!containerRuntimeConceivable()) return undefined;

  const tc = await import('testcontainers');
  let host: string;
  try {
    const client = await withTimeout(
      tc.getContainerRuntimeClient(),
      RUNTIME_PROBE_TIMEOUT_MS,
      'container runtime probe',
    );
    host = client.info.containerRuntime.host;
  } catch (err) {
    log(`no usable container runtime (${errorMessage(err)}); using the ops/kafka launcher`);
    return undefined;
  }

  // Kafka must advertise the address clients use, so the host port is chosen up front.
  const hostPort = await freePort();
  log(`starting ${KAFKA_IMAGE} with testcontainers on ${host}:${hostPort}`);
  const container = await new tc.GenericContainer(KAFKA_IMAGE)
    .withExposedPorts({ container: 9092, host: hostPort })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: 'PLAINTEXT://:9092,BROKER://:9094,CONTROLLER://:9093',
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://${host}:${hostPort},BROKER://localhost:9094`,
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT',
      KAFKA_INTER_BROKER_LISTENER_NAME: 'BROKER',
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS: '4',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'true',
      KAFKA_NUM_PARTITIONS: '1',
    })
    .withWaitStrategy(tc.Wait.forLogMessage(/Kafka Server started/))
    .withStartupTimeout(START_TIMEOUT_S * 1000)
    .start();

  let released = false;
  const brokers = [`${host}:${hostPort}`];
  const handle: KafkaHandle = {
    brokers,
    release: async () => {
      if (released) return;
      released = true;
      await container.stop();
    },
  };
  try {
    await waitForMetadata(brokers);
  } catch (err) {
    await handle.release().catch(() => undefined);
    throw err;
  }
  return handle;
}

// ---------------------------------------------------------------- (c) ops/kafka launcher

async function fromOpsLauncher(): Promise<KafkaHandle> {
  const t0 = Date.now();
  await run('bash', [path.join(OPS_DIR, 'fetch.sh')], { timeoutMs: FETCH_TIMEOUT_MS });
  const tFetched = Date.now();

  let lastErr: unknown;
  // A port found free can be taken before the broker binds it: retry with another one.
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    const runDir = await mkdtemp(path.join(os.tmpdir(), 'bitledger-kafka-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      KAFKA_OWNER_PID: String(process.pid),
      KAFKA_START_TIMEOUT: String(START_TIMEOUT_S),
    };
    const stop = async (): Promise<void> => {
      await run('bash', [path.join(OPS_DIR, 'stop.sh'), runDir], { timeoutMs: 60_000 });
    };
    try {
      await run('bash', [path.join(OPS_DIR, 'start.sh'), String(port), runDir], {
        timeoutMs: (START_TIMEOUT_S + 30) * 1000,
        env,
      });
      const brokers = [`127.0.0.1:${port}`];
      await waitForMetadata(brokers);
      log(
        `ops/kafka broker on ${brokers[0]} (fetch ${tFetched - t0} ms, start ${Date.now() - tFetched} ms, run dir ${runDir})`,
      );
      let released = false;
      return {
        brokers,
        release: async () => {
          if (released) return;
          released = true;
          try {
            await stop();
          } finally {
            await rm(runDir, { recursive: true, force: true });
          }
        },
      };
    } catch (err) {
      lastErr = err;
      log(`ops/kafka start attempt ${attempt} on port ${port} failed: ${errorMessage(err)}`);
      await stop().catch(() => undefined);
      await rm(runDir, { recursive: true, force: true }).catch(() => undefined);
    }
  }
  throw new Error(`could not start the ops/kafka broker: ${errorMessage(lastErr)}`);
}

// ---------------------------------------------------------------- public

export async function acquireKafka(): Promise<KafkaHandle> {
  const env = fromEnv();
  if (env) {
    await waitForMetadata(env.brokers);
    return env;
  }
  const errors: string[] = [];
  try {
    const container = await fromTestcontainers();
    if (container) return container;
  } catch (err) {
    errors.push(`testcontainers: ${errorMessage(err)}`);
    log(`testcontainers failed (${errorMessage(err)}); using the ops/kafka launcher`);
  }
  try {
    return await fromOpsLauncher();
  } catch (err) {
    errors.push(`ops/kafka: ${errorMessage(err)}`);
  }
  throw new Error(
    `No Kafka broker available${process.env.CI === 'true' ? ' (CI: Kafka tests must not be skipped)' : ''}.\n` +
      `Set KAFKA_BROKERS, provide a container runtime, or install java + mvn for ops/kafka.\n${errors.join('\n')}`,
  );
}

/**
 * Brokers for a test file: the run's shared broker provided by the globalSetup, else one acquired
 * for this file (release() then stops it; for the shared broker release() does nothing).
 * Call it in beforeAll and release in afterAll.
 */
export async function kafkaBrokersForTest(): Promise<KafkaHandle> {
  const { inject } = await import('vitest');
  const provided = inject('kafkaBrokers');
  if (provided !== undefined && provided.length > 0) {
    return { brokers: provided, release: async () => undefined };
  }
  return acquireKafka();
}
