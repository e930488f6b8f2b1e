// A power-cut suite's fixture: a scratch directory with the sync-ledger shim built in it (before
// all tests), servers started under the shim over a data directory of their own, and all of
// them killed and the directory removed after.
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { buildSyncLedgerShim, syncLedgerEnv } from './power-cut.js';
import { post } from './row-imports.js';
import { freePort, removeDir, spawnServer, tempDir, type ChildServer } from './server.js';

/** One server's data directory, its sync ledger, and how to start it (again) on its port. */
export interface ShimmedNode {
  readonly dataDir: string;
  readonly ledger: string;
  start(): Promise<ChildServer>;
}

export interface PowerCutSuite {
  workDir(): string;
  /** A node `name` under the shim, started with `args` and `env` beside the shim's (not started yet). */
  node(name: string, args: string[], env?: NodeJS.ProcessEnv): Promise<ShimmedNode>;
}

export function powerCutSuite(prefix: string): PowerCutSuite {
  let workDir = '';
  let shim = '';
  const running: ChildServer[] = [];
  beforeAll(() => {
    workDir = tempDir(prefix);
    shim = buildSyncLedgerShim(workDir);
  });
  afterAll(async () => {
    for (const s of running) await s.kill('SIGKILL');
    removeDir(workDir);
  });
  return {
    workDir: () => workDir,
    async node(name, args, extraEnv = {}) {
      const dataDir = join(workDir, name);
      const ledger = join(workDir, `${name}.ledger`);
      const env = { ...syncLedgerEnv(shim, ledger, dataDir), ...extraEnv };
      const port = await freePort();
      const start = async (): Promise<ChildServer> => {
        const s = await spawnServer(dataDir, port, args, env);
        running.push(s);
        return s;
      };
      return { dataDir, ledger, start };
    },
  };
}

/**
 * Creates index c with field f and stops the server gracefully: the schema is made durable by
 * the stop and the next open (LevelDB writes its recovered log to a synced table), so every
 * policy starts from the same state.
 */
export async function durableSchema(node: ShimmedNode): Promise<void> {
  const server = await node.start();
  expect((await post(`${server.url}/index/c`, '')).status).toBe(200);
  expect((await post(`${server.url}/index/c/field/f`, '')).status).toBe(200);
  await server.kill('SIGTERM');
}
