// Issue 15, defect 7: https with a certificate made at test time, bearer tokens (none, wrong,
// read-only, read-write), cross-origin writes refused (a text/plain POST needs no preflight),
// and a foreign Host refused on a loopback-bound server (DNS rebinding). A Pilosa-style client
// (no Origin, Host 127.0.0.1:port or localhost:port) keeps working with auth off.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { removeDir, startServer, stopServer, tempDir, type TestServer } from '../helpers/server.js';

const dir = tempDir();
let plain: TestServer;

async function send(
  s: TestServer,
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  headers: Record<string, string> = {},
  payload?: string,
): Promise<{ status: number; body: string }> {
  const r = await s.app.inject({ method, url, headers, payload });
  return { status: r.statusCode, body: r.body };
}

beforeAll(async () => {
  plain = await startServer();
});

afterAll(async () => {
  await stopServer(plain);
  removeDir(dir);
});

describe('default settings (auth off, bound to loopback)', () => {
  it('serves a Pilosa-style client: no Origin, Host 127.0.0.1:port or localhost:port', async () => {
    for (const [i, host] of ['127.0.0.1:10101', 'localhost:10101', '[::1]:10101', 'localhost'].entries()) {
      expect((await send(plain, 'POST', `/index/p${i}`, { host }, '')).status, host).toBe(200);
      expect((await send(plain, 'GET', '/schema', { host })).status, host).toBe(200);
    }
  });

  it('refuses a foreign Host (DNS rebinding) on reads and writes', async () => {
    for (const [method, url] of [
      ['GET', '/schema'],
      ['POST', '/index/x'],
    ] as const) {
      const r = await send(plain, method, url, { host: 'evil.example:10101' });
      expect(r.status, url).toBe(403);
      expect(r.body).toMatch(/not a loopback name/);
    }
  });

  it('refuses a cross-origin text/plain POST, and takes a same-origin one', async () => {
    const evil = await send(
      plain,
      'POST',
      '/index/e',
      { host: '127.0.0.1:10101', origin: 'http://evil.example', 'content-type': 'text/plain' },
      '',
    );
    expect(evil.status).toBe(403);
    expect(evil.body).toMatch(/cross-origin POST from http:\/\/evil.example refused/);
    const q = await send(
      plain,
      'POST',
      '/index/p0/query',
      { host: '127.0.0.1:10101', origin: 'http://evil.example', 'content-type': 'text/plain' },
      'Set(1, f=1)',
    );
    expect(q.status).toBe(403);
    expect(JSON.parse(q.body).error).toMatch(/cross-origin/);
    const own = await send(
      plain,
      'POST',
      '/index/own',
      { host: '127.0.0.1:10101', origin: 'http://127.0.0.1:10101', 'content-type': 'text/plain' },
      '',
    );
    expect(own.status).toBe(200);
  });

  it('takes origins listed in --allowed-origins', async () => {
    const s = await startServer({ allowedOrigins: ['http://console.example:8080'] });
    try {
      expect((await send(s, 'POST', '/index/a', { origin: 'http://console.example:8080' }, '')).status).toBe(200);
      expect((await send(s, 'POST', '/index/b', { origin: 'http://other.example' }, '')).status).toBe(403);
    } finally {
      await stopServer(s);
    }
  });

  it('does not check Host when bound to all interfaces', async () => {
    const s = await startServer({ bind: '0.0.0.0:0' });
    try {
      expect((await send(s, 'GET', '/schema', { host: 'db.internal:10101' })).status).toBe(200);
    } finally {
      await stopServer(s);
    }
  });
});

describe('bearer tokens (--auth-token-file)', () => {
  let s: TestServer;
  beforeAll(async () => {
    const file = join(dir, 'tokens');
    writeFileSync(file, '# role per token\nreader-token read-only\nwriter-token read-write\n');
    s = await startServer({ authTokenFile: file });
  });
  afterAll(() => stopServer(s));
  const bearer = (t: string): Record<string, string> => ({ authorization: `Bearer ${t}` });

  it('refuses requests without a token or with a wrong one (401), on every route', async () => {
    for (const headers of [{}, bearer('nope'), { authorization: 'Basic d3JpdGVyLXRva2Vu' }]) {
      for (const [method, url] of [
        ['GET', '/status'],
        ['GET', '/schema'],
        ['POST', '/index/i'],
        ['GET', '/internal/shards/max'],
      ] as const) {
        const r = await send(s, method, url, headers, method === 'POST' ? '' : undefined);
        expect(r.status, `${method} ${url}`).toBe(401);
        expect(r.body).toMatch(/bearer token is required/);
      }
    }
  });

  it('lets a read-write token do everything', async () => {
    expect((await send(s, 'POST', '/index/i', bearer('writer-token'), '')).status).toBe(200);
    expect((await send(s, 'POST', '/index/i/field/f', bearer('writer-token'), '')).status).toBe(200);
    expect((await send(s, 'POST', '/index/i/query', bearer('writer-token'), 'Set(1, f=1)')).status).toBe(200);
  });

  it('lets a read-only token read and run read queries, nothing else', async () => {
    expect((await send(s, 'GET', '/schema', bearer('reader-token'))).status).toBe(200);
    const q = await send(s, 'POST', '/index/i/query', bearer('reader-token'), 'Count(Row(f=1))');
    expect(q.status).toBe(200);
    expect(JSON.parse(q.body).results).toEqual([1]);
    const w = await send(s, 'POST', '/index/i/query', bearer('reader-token'), 'Count(Row(f=1)) Set(2, f=1)');
    expect(w.status).toBe(403);
    expect(w.body).toMatch(/read-only token/);
    for (const [method, url] of [
      ['POST', '/index/j'],
      ['DELETE', '/index/i'],
      ['POST', '/recalculate-caches'],
    ] as const) {
      expect((await send(s, method, url, bearer('reader-token'), method === 'POST' ? '' : undefined)).status, url).toBe(
        403,
      );
    }
    // Nothing changed.
    expect(
      JSON.parse((await send(s, 'POST', '/index/i/query', bearer('writer-token'), 'Count(Row(f=1))')).body).results,
    ).toEqual([1]);
  });

  it('leaves /health and /ready open (answered by their routes, not 401)', async () => {
    for (const url of ['/health', '/ready']) expect((await send(s, 'GET', url)).status, url).not.toBe(401);
  });
});

describe('TLS (--tls-certificate, --tls-key)', () => {
  it('serves https with a certificate made at test time', async () => {
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const s = await startServer({ tlsCertificate: cert, tlsKey: key });
    try {
      const port = await s.listen();
      const ca = execFileSync('cat', [cert]);
      const body = await new Promise<string>((resolve, reject) => {
        const r = request({ host: '127.0.0.1', port, path: '/status', ca, servername: 'localhost' }, (res) => {
          let out = '';
          res.on('data', (d: Buffer) => (out += d.toString()));
          res.on('end', () => (res.statusCode === 200 ? resolve(out) : reject(new Error(`status ${res.statusCode}`))));
        });
        r.on('error', reject);
        r.end();
      });
      expect(JSON.parse(body)).toHaveProperty('state');
      // Plain http on the TLS port is not served.
      await expect(fetch(`http://127.0.0.1:${port}/status`)).rejects.toThrow();
    } finally {
      await stopServer(s);
    }
  });

  it("reads Pilosa's [tls] table from a TOML config file", () => {
    const file = join(dir, 'pilosa.toml');
    writeFileSync(
      file,
      'bind = "127.0.0.1:10101"\n[tls]\ncertificate = "/etc/c.pem"\nkey = "/etc/k.pem"\nskip-verify = true\n',
    );
    const cfg = loadConfig(['--config', file], {});
    expect([cfg.tlsCertificate, cfg.tlsKey, cfg.tlsSkipVerify]).toEqual(['/etc/c.pem', '/etc/k.pem', true]);
    expect(loadConfig(['--tls.certificate', '/x.pem'], {}).tlsCertificate).toBe('/x.pem');
  });
});
