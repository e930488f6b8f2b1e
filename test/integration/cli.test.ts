// The bitledger command as a user runs it (a child process): --help exits 0 listing every
// command and flag; each expected error is one line on stderr, exit 2, no stack trace.
import { spawn } from 'node:child_process';
import { createServer as createNetServer } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SETTINGS } from '../../src/config/settings.js';
import { freePort, removeDir, startServer, stopServer, tempDir, type TestServer } from '../helpers/server.js';

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, BITLEDGER_CONFIG: '' },
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

function expectOneLineError(r: { code: number | null; stderr: string }, pattern: RegExp): void {
  expect(r.code).toBe(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

const dir = tempDir();
let server: TestServer | undefined;
afterAll(async () => {
  await stopServer(server);
  removeDir(dir);
});

describe('bitledger command line', () => {
  it('--help and COMMAND --help exit 0 and list every command and flag', async () => {
    const [help, imp] = await Promise.all([run(['--help']), run(['import', '--help'])]);
    expect(help.code).toBe(0);
    for (const c of ['server', 'inspect', 'truncate-log', 'import', 'export']) expect(help.stdout).toContain(`  ${c} `);
    for (const s of SETTINGS) expect(help.stdout).toContain(`--${s.name} `);
    expect(imp.code).toBe(0);
    expect(imp.stdout).toContain('-i, --index INDEX');
  });

  it('bad flags, unknown commands and config-file problems are one line and exit 2', async () => {
    const bogus = join(dir, 'bogus.toml');
    writeFileSync(bogus, 'no-such-key = 1\n');
    const [flag, noValue, command, missing, unknownKey] = await Promise.all([
      run(['--nope', '1']),
      run(['server', '--bind']),
      run(['frobnicate']),
      run(['--config', join(dir, 'missing.toml')]),
      run(['--config', bogus]),
    ]);
    expectOneLineError(flag, /unknown setting "nope"/);
    expectOneLineError(noValue, /flag --bind needs a value/);
    expectOneLineError(command, /unknown command frobnicate/);
    expectOneLineError(missing, /config file .*missing.toml: not found/);
    expectOneLineError(unknownKey, /unknown setting "no-such-key"/);
  });

  it('a port in use and a data directory in use are one line and exit 2', async () => {
    const blocker = createNetServer();
    const port = await freePort();
    await new Promise<void>((r) => blocker.listen(port, '127.0.0.1', () => r()));
    server = await startServer();
    try {
      const [portInUse, dirInUse] = await Promise.all([
        run(['--bind', `127.0.0.1:${port}`, '--data-dir', join(dir, 'fresh')]),
        run(['--bind', `127.0.0.1:${await freePort()}`, '--data-dir', server.dataDir, '--log-level', 'error']),
      ]);
      expectOneLineError(portInUse, new RegExp(`cannot listen on 127.0.0.1:${port}: address already in use`));
      expectOneLineError(dirInUse, /is in use by another process/);
    } finally {
      blocker.close();
    }
  });
});
