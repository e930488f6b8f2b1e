// --request-body-timeout (issue 23): a body that arrives slowly gets 408 and its connection is
// closed once the bound passes, on the server process's own socket (launchServer); normal clients
// are answered meanwhile. The default is a minute.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/config.js';
import { type ChildServer, freePort, removeDir, spawnServer, tempDir } from '../helpers/server.js';

let server: ChildServer;
const dir = tempDir();

beforeAll(async () => {
  server = await spawnServer(dir, await freePort(), ['--request-body-timeout', '1s']);
}, 60_000);

afterAll(async () => {
  await server?.kill('SIGKILL');
  removeDir(dir);
});

describe('request-body timeout', () => {
  it('defaults to 60 s', () => {
    expect(DEFAULTS.requestBodyTimeout).toBe(60_000);
  });

  it('answers 408 and closes a connection whose body stops arriving', async () => {
    const sock = connect(server.port, '127.0.0.1');
    let answer = '';
    sock.on('data', (d: Buffer) => {
      answer += d.toString();
    });
    const closed = new Promise<void>((resolve) => sock.once('close', () => resolve()));
    sock.write('POST /index/i/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nCount(');
    // While it hangs, others are served.
    expect((await fetch(`${server.url}/status`)).status).toBe(200);
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(server.proc.exitCode).toBeNull();
  }, 60_000);
});
