// Every way the project starts a server passes the V8 flags of src/config/node-flags.ts: they
// cannot be set from inside the process (v8.setFlagsFromString is too late for the heap's
// configuration, NODE_OPTIONS refuses them), so a launcher that drops one silently runs the
// server with a full collection per large import again.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SERVER_NODE_FLAGS } from '../../../src/config/node-flags.js';
import { serverArgv } from '../../helpers/server.js';

const repo = (p: string): string => readFileSync(new URL(`../../../${p}`, import.meta.url), 'utf8');

describe('server node flags', () => {
  const launchers: [string, string][] = [
    ['package.json start', (JSON.parse(repo('package.json')) as { scripts: { start: string } }).scripts.start],
    [
      'Dockerfile CMD',
      repo('Dockerfile')
        .split('\n')
        .find((l) => l.startsWith('CMD ')) ?? '',
    ],
    ['the bin shebang (src/main.ts)', repo('src/main.ts').split('\n')[0]],
    ['test child servers (serverArgv)', serverArgv('/d', 1).join(' ')],
  ];
  it.each(launchers)('%s passes every flag', (_name, line) => {
    expect(line).not.toBe('');
    for (const flag of SERVER_NODE_FLAGS) expect(line).toContain(flag);
  });

  it('node accepts the flags', async () => {
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(process.execPath, [...SERVER_NODE_FLAGS, '-e', 'process.stdout.write("ok")'], {
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('ok');
  });
});
