// The fan-out's member calls (src/cluster/membership/member-connection.ts) against a real node:http
// server on a socket: answers by Content-Length, chunked and until close; one connection kept and
// reused; a kept connection the server closed is replaced; an abort and a refused connection reject
// (with the codes the member's health reads).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postMember } from '../../../src/cluster/membership/member-connection.js';
import { postUnreachable } from '../../../src/cluster/membership/member-post.js';

let server: Server;
let base: string;
/** Connections the server accepted, in order. */
const sockets: Socket[] = [];
/** Requests the server saw: their body and authorization header. */
const seen: { body: string; auth?: string; socket: number }[] = [];

function handle(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    seen.push({ body, auth: req.headers.authorization, socket: sockets.indexOf(req.socket) });
    const echo = JSON.stringify({ got: JSON.parse(body) as unknown });
    switch (req.url) {
      case '/length':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(echo) });
        res.end(echo);
        return;
      case '/chunked':
        res.writeHead(503, { 'content-type': 'application/json' });
        // Written in pieces, a multi-byte character split between two of them.
        res.write(echo.slice(0, 5));
        res.write(Buffer.from('{"é":"ü'));
        setImmediate(() => res.end('"}'));
        return;
      case '/close':
        res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
        res.end(echo);
        return;
      case '/hang':
        return;
      case '/drop-kept':
        // A connection that served before is closed without an answer (as at its idle timeout).
        if (seen.filter((x) => x.socket === sockets.indexOf(req.socket)).length > 1) {
          req.socket.destroy();
          return;
        }
        res.writeHead(200, { 'content-length': Buffer.byteLength(echo) });
        res.end(echo);
        return;
      default:
        res.writeHead(404, { 'content-length': '0' });
        res.end();
    }
  });
}

beforeAll(async () => {
  server = createServer(handle);
  server.on('connection', (s: Socket) => sockets.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('member calls over kept connections', () => {
  it('reads answers by length, chunked and until close, and keeps one connection for calls in turn', async () => {
    const first = sockets.length;
    const a = await postMember(`${base}/length`, '{"n":1}', { authorization: 'Bearer t' });
    expect(a).toEqual({ status: 200, text: '{"got":{"n":1}}' });
    const b = await postMember(`${base}/chunked`, '{"n":"ü"}', {});
    expect(b).toEqual({ status: 503, text: '{"got{"é":"ü"}' });
    const c = await postMember(`${base}/length`, '{"n":3}', {});
    expect(c.text).toBe('{"got":{"n":3}}');
    expect(sockets.length - first).toBe(1);
    expect(seen.slice(-3).map((s) => s.socket)).toEqual([first, first, first]);
    expect(seen.at(-3)?.auth).toBe('Bearer t');
    // An answer that closes its connection is whole; the next call opens a new one.
    expect((await postMember(`${base}/close`, '{"n":4}', {})).text).toBe('{"got":{"n":4}}');
    expect((await postMember(`${base}/length`, '{"n":5}', {})).text).toBe('{"got":{"n":5}}');
    expect(sockets.length - first).toBe(2);
  });

  it('calls at once each get a connection of their own and their own answer', async () => {
    const got = await Promise.all(
      Array.from({ length: 5 }, (_, i) => postMember(`${base}/length`, JSON.stringify({ i }), {})),
    );
    expect(got.map((g) => g.text)).toEqual([0, 1, 2, 3, 4].map((i) => `{"got":{"i":${i}}}`));
  });

  it('a kept connection the server closed meanwhile is replaced, the call answered', async () => {
    await postMember(`${base}/length`, '{"n":1}', {});
    const before = sockets.length;
    // The server drops every idle connection (its keep-alive timeout) without the client reading it yet.
    server.closeIdleConnections();
    const a = await postMember(`${base}/length`, '{"n":2}', {});
    expect(a.text).toBe('{"got":{"n":2}}');
    expect(sockets.length).toBeGreaterThan(before);
    // Closed as the call goes out on it: sent once more on a new connection, which answers.
    const kept = sockets.length;
    const b = await postMember(`${base}/drop-kept`, '{"n":3}', {});
    expect(b.text).toBe('{"got":{"n":3}}');
    expect(sockets.length).toBe(kept + 1);
  });

  it('an abort rejects at once, and a refused connection rejects with its code', async () => {
    const ac = new AbortController();
    const hung = postMember(`${base}/hang`, '{}', {}, ac.signal);
    ac.abort();
    await expect(hung).rejects.toMatchObject({ name: 'AbortError' });
    await expect(postMember(`${base}/length`, '{}', {}, ac.signal)).rejects.toMatchObject({ name: 'AbortError' });
    // A port nobody listens on: bind one, then close it.
    const spare = createServer();
    await new Promise<void>((r) => spare.listen(0, '127.0.0.1', r));
    const port = (spare.address() as AddressInfo).port;
    await new Promise<void>((r) => spare.close(() => r()));
    const err = await postMember(`http://127.0.0.1:${port}/length`, '{}', {}).catch((e: unknown) => e);
    expect(postUnreachable(err)).toEqual({ unreachable: true, refused: true });
    // The server still answers on a new connection after the abort.
    expect((await postMember(`${base}/length`, '{"n":6}', {})).text).toBe('{"got":{"n":6}}');
  });
});
