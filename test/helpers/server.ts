// Real servers for tests: in-process (fastify inject or a real socket) over a real LevelDB in a
// temp directory, or a child process that crash tests can SIGKILL.
import { SERVER_NODE_FLAGS } from '../../src/config/node-flags.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { removeDir, tempDir } from './temp.js';
import { pino } from 'pino';
import { createServer, type Server } from '../../src/app.js';
import { DEFAULTS, type Config } from '../../src/config/config.js';

export { removeDir, tempDir } from './temp.js';

export interface TestServer extends Server {
  dataDir: string;
  fatal: Error[];
}

/**
 * The query workers of test servers: BITLEDGER_QUERY_WORKERS when set (`npm test` runs the query
 * tests again with 2: vitest.query-workers.config.ts), else 1, the request thread alone: a
 * server's worker threads take seconds to start under tsx, which hundreds of test servers need
 * not pay. A test that names its own wins.
 */
export function testQueryWorkers(): Partial<Config> {
  const n = Number(process.env.BITLEDGER_QUERY_WORKERS);
  return { queryWorkers: Number.isSafeInteger(n) && n > 0 ? n : 1 };
}

/** Whether the environment asks test servers for query workers (the second run of the query tests). */
const workersAsked = (): boolean => (testQueryWorkers().queryWorkers ?? 1) > 1;

/**
 * Waits for the server's query workers: queries run on the request thread until they are up
 * (seconds under tsx), and a test of the workers' path would test the request thread. With
 * workers asked for, every read query that can be spread is, one-shard ones included, and shared
 * with idle workers whether or not that was faster lately.
 */
export async function useQueryWorkers(server: Server): Promise<void> {
  await server.queryWorkers?.whenReady();
  if (server.queryWorkers !== undefined && workersAsked()) {
    server.queryWorkers.minShards = 1;
    server.queryWorkers.minWorkBits = 0;
    // Idle workers always share (tiny test reads would be faster on the request thread alone).
    server.queryWorkers.adaptShare = false;
  }
}

export async function startServer(overrides: Partial<Config> = {}): Promise<TestServer> {
  const dataDir = overrides.dataDir ?? tempDir();
  const fatal: Error[] = [];
  const cfg: Config = { ...DEFAULTS, bind: '127.0.0.1:0', ...testQueryWorkers(), ...overrides, dataDir };
  const server = await createServer(cfg, pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }), (err) =>
    fatal.push(err),
  );
  await server.app.ready();
  await useQueryWorkers(server);
  return Object.assign(server, { dataDir, fatal });
}

/** Closes a test server and removes its data directory; nothing to do for undefined. */
export async function stopServer(server: TestServer | undefined): Promise<void> {
  if (server === undefined) return;
  await server.close();
  removeDir(server.dataDir);
}

/** A server in its own process, started the way the README starts it. */
export interface ChildServer {
  proc: ChildProcess;
  port: number;
  url: string;
  output: () => string;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Node's arguments to run `bitledger server` from src/ on 127.0.0.1:`port` over `dataDir`. */
export function serverArgv(dataDir: string, port: number, extraArgs: string[] = []): string[] {
  return [
    ...SERVER_NODE_FLAGS,
    '--import',
    'tsx',
    'src/main.ts',
    'server',
    '--bind',
    `127.0.0.1:${port}`,
    '--data-dir',
    dataDir,
    ...extraArgs,
  ];
}

/** `env` adds to the inherited environment (e.g. LD_PRELOAD for the power-cut tests). */
export async function spawnServer(
  dataDir: string,
  port: number,
  extraArgs: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<ChildServer> {
  const proc = spawn(process.execPath, serverArgv(dataDir, port, ['--log-level', 'warn', ...extraArgs]), {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_ENV: 'test', ...env },
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  // Generous: on a loaded machine tsx's first transform of src/ alone can take tens of seconds.
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}: ${out}`);
    try {
      const r = await fetch(`${url}/status`);
      // 401: a server started with --auth-token-file answers, just not without a token.
      if (r.ok || r.status === 401) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`server did not start: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    proc,
    port,
    url,
    output: () => out,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const p = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => resolve(p));
    });
  });
}
