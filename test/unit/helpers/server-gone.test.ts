// The crash tests' client filter: a dead connection is tolerated, any answer that is wrong is not.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isServerGone, unlessServerGone } from '../../helpers/server-gone.js';
import { freePort } from '../../helpers/server.js';

let server: Server;
let url = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/cut') {
      // Headers out, then the process "dies" mid-body.
      res.writeHead(200, { 'content-length': '1000' });
      res.write('{"results":');
      setTimeout(() => req.socket.destroy(), 20);
      return;
    }
    res.writeHead(req.url === '/500' ? 500 : 200, { 'content-type': 'application/json' });
    res.end(req.url === '/500' ? '{"error":"boom"}' : '{"results":[false]}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  url = `http://127.0.0.1:${typeof a === 'object' && a !== null ? a.port : 0}`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('isServerGone', () => {
  it('is true for a refused connection', async () => {
    const port = await freePort();
    const err = await fetch(`http://127.0.0.1:${port}/`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isServerGone(err)).toBe(true);
    expect(await unlessServerGone(async () => void (await fetch(`http://127.0.0.1:${port}/`)))).toBe(false);
  });

  it('is true for a body cut off by the peer', async () => {
    const err = await fetch(`${url}/cut`)
      .then((r) => r.text())
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isServerGone(err)).toBe(true);
  });

  it('rethrows a wrong answer and a failed assertion', async () => {
    const wrongStatus = unlessServerGone(async () => {
      const r = await fetch(`${url}/500`);
      if (r.status !== 200) throw new Error(`answered ${r.status}`);
    });
    await expect(wrongStatus).rejects.toThrow('answered 500');
    const wrongBody = unlessServerGone(async () => {
      const r = await fetch(`${url}/ok`);
      expect(((await r.json()) as { results: boolean[] }).results).toEqual([true]);
    });
    await expect(wrongBody).rejects.toThrow();
    expect(isServerGone(new TypeError('x is not a function'))).toBe(false);
    expect(isServerGone(new Error('fetch failed'))).toBe(false);
  });
});
