// The console's HTTP surface: GET / serves the page only to browsers (other clients keep the
// 404 they always had), assets come with the right types and cache validators, no path escapes
// web/console, and GET /internal/state reports the durability figures the status panel shows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

beforeAll(async () => {
  server = await startServer({ fsync: 'interval', fsyncIntervalMs: 50 });
});
afterAll(async () => {
  await stopServer(server);
});

describe('GET /', () => {
  it('serves the console to a browser, with a policy that forbids other origins', async () => {
    const r = await server.app.inject({ method: 'GET', url: '/', headers: HTML });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.body).toContain('<title>bitledger console</title>');
    expect(r.body).not.toMatch(/(src|href)=["'](https?:)?\/\//); // nothing from a CDN
    expect(String(r.headers['content-security-policy'])).toContain("default-src 'self'");
  });

  it('keeps answering 404 to API clients (JSON, no Accept, */*)', async () => {
    for (const headers of [{}, { accept: 'application/json' }, { accept: '*/*' }]) {
      const r = await server.app.inject({ method: 'GET', url: '/', headers });
      expect(r.statusCode).toBe(404);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(r.body)).toEqual({ success: false, error: { message: 'not found: GET /' } });
    }
  });
});

describe('GET /console/*', () => {
  it('serves scripts and styles with their content types and a validator', async () => {
    const js = await server.app.inject({ method: 'GET', url: '/console/js/main.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('no-cache');
    expect(js.headers['x-content-type-options']).toBe('nosniff');
    const css = await server.app.inject({ method: 'GET', url: '/console/console.css' });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');

    const etag = String(js.headers.etag);
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await server.app.inject({
      method: 'GET',
      url: '/console/js/main.js',
      headers: { 'if-none-match': etag },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const other = await server.app.inject({
      method: 'GET',
      url: '/console/console.css',
      headers: { 'if-none-match': etag },
    });
    expect(other.statusCode).toBe(200);
  });

  it('never reaches outside web/console', async () => {
    const attempts = [
      '/console/../package.json',
      '/console/..%2fpackage.json',
      '/console/..%2F..%2Fpackage.json',
      '/console/%2e%2e/%2e%2e/package.json',
      '/console//etc/passwd',
      '/console/js/../../../package.json',
      '/console/',
      '/console/js',
      '/console/nothing.js',
    ];
    for (const url of attempts) {
      const r = await server.app.inject({ method: 'GET', url });
      expect(r.statusCode, url).toBe(404);
      expect(r.body, url).not.toContain('"dependencies"');
    }
  });
});

describe('GET /internal/state', () => {
  it('reports sequences, the fsync policy and the newest snapshot', async () => {
    const before = JSON.parse((await server.app.inject({ method: 'GET', url: '/internal/state' })).body);
    expect(before.fsync).toEqual({ policy: 'interval', intervalMs: 50 });
    expect(before.snapshot.newest).toBeNull();
    expect(before.state).toBe('NORMAL');

    expect((await server.app.inject({ method: 'POST', url: '/index/i' })).statusCode).toBe(200);
    expect((await server.app.inject({ method: 'POST', url: '/index/i/field/f' })).statusCode).toBe(200);
    expect(
      (await server.app.inject({ method: 'POST', url: '/index/i/query', payload: 'Set(1, f=1) Set(2, f=1)' }))
        .statusCode,
    ).toBe(200);
    const mid = JSON.parse((await server.app.inject({ method: 'GET', url: '/internal/state' })).body);
    expect(mid.sequence.applied).toBe(before.sequence.applied + 4);
    expect(mid.sequence.durable).toBe(mid.sequence.applied);
    expect(mid.snapshot.recordsSince).toBe(mid.sequence.applied);

    const seq = await server.engine.snapshot();
    const after = JSON.parse((await server.app.inject({ method: 'GET', url: '/internal/state' })).body);
    expect(after.snapshot.newest.seq).toBe(seq);
    expect(after.snapshot.newest.bytes).toBeGreaterThan(0);
    expect(Math.abs(Date.parse(after.snapshot.newest.at) - Date.now())).toBeLessThan(60_000);
    expect(after.snapshot.recordsSince).toBe(0);
    expect(after.snapshot.writtenSinceStart).toBe(1);
  });
});
