// Answers that cannot hurt the server (issue 23). In a server process of its own: a 3 KB query of
// 300 copies of a 1M-column row, and 300 copies of a row with a 1 MB attribute, are refused with a
// 400 naming --max-result-bytes and the size, before the answer is built (the process stays up,
// its resident memory grows by little). In process, on a real socket: a 10M-column JSON answer is
// written in slices — /status is answered while the answer's end has not been written, with the
// client not reading — and the whole answer then arrives intact.
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from '../../src/app.js';
import { DEFAULTS } from '../../src/config/config.js';
import { encodeImportRoaringRequest } from '../../src/encoding/public-proto.js';
import { RoaringBitmap32 } from '../../src/roaring/bitmap.js';
import { encodePilosaRoaring } from '../../src/roaring/pilosa-roaring.js';
import { type ChildServer, freePort, removeDir, spawnServer, tempDir } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const SHARD = 1 << 20;
const MIB = 1024 * 1024;
const PB = { 'content-type': 'application/x-protobuf' };

async function post(url: string, body: string | Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers });
}

/** Row 1 of field g holds every column of shards 0..shards-1. */
async function fullRows(url: string, shards: number): Promise<void> {
  expect((await post(`${url}/index/i`, '')).status).toBe(200);
  expect((await post(`${url}/index/i/field/g`, '')).status).toBe(200);
  const all = new RoaringBitmap32();
  all.addRange(0, SHARD);
  const body = encodeImportRoaringRequest({
    clear: false,
    views: [{ name: '', data: encodePilosaRoaring(new Map([[1, all]])) }],
  });
  for (let s = 0; s < shards; s++) {
    const r = await post(`${url}/index/i/field/g/import-roaring/${s}`, body, PB);
    expect(r.status, await r.text()).toBe(200);
  }
}

const rssBytes = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
};

describe('the byte budget of an answer, in a server process', () => {
  let server: ChildServer;
  let dir: string;

  beforeAll(async () => {
    dir = tempDir();
    server = await spawnServer(dir, await freePort());
    await fullRows(server.url, 1);
  }, 120_000);

  afterAll(async () => {
    await server?.kill('SIGKILL');
    removeDir(dir);
  });

  it('refuses 300 copies of a 1M-column row with a 400 naming the bound and the size; the process stays up', async () => {
    const one = await post(`${server.url}/index/i/query`, 'Count(Row(g=1))');
    expect(await one.json()).toEqual({ results: [SHARD] });
    const pid = server.proc.pid ?? 0;
    const before = rssBytes(pid);
    const text = 'Row(g=1)'.repeat(300);
    expect(text.length).toBeLessThan(3000);
    for (let round = 0; round < 3; round++) {
      const r = await post(`${server.url}/index/i/query`, text);
      expect(r.status).toBe(400);
      const err = ((await r.json()) as { error: string }).error;
      expect(err).toMatch(/max-result-bytes/);
      expect(err).toMatch(/over the bound of 256\.0 MiB/);
      expect(err).toMatch(/at least \d+\.\d MiB \(\d+ bytes, columns\)/);
    }
    const after = rssBytes(pid);
    // Refused before the columns were listed: 300M columns would have been gigabytes.
    expect(after - before).toBeLessThan(64 * MIB);
    expect(server.proc.exitCode).toBeNull();
    expect((await fetch(`${server.url}/status`)).status).toBe(200);
    expect(await (await post(`${server.url}/index/i/query`, 'Count(Row(g=1))')).json()).toEqual({ results: [SHARD] });
  }, 120_000);

  it('counts row attributes: 300 copies of a row with a 1 MB attribute are refused', async () => {
    const big = 'x'.repeat(MIB);
    const set = await post(`${server.url}/index/i/query`, `SetRowAttrs(g, 2, big="${big}")`);
    expect(set.status).toBe(200);
    const r = await post(`${server.url}/index/i/query`, 'Row(g=2)'.repeat(300));
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toMatch(/row attributes.*max-result-bytes/);
    const few = await post(`${server.url}/index/i/query`, 'Row(g=2)'.repeat(3));
    expect(few.status).toBe(200);
    expect(((await few.json()) as { results: { attrs: { big: string } }[] }).results[2].attrs.big.length).toBe(MIB);
  }, 60_000);
});

describe('a 10M-column JSON answer is written in slices', () => {
  let server: Server;
  let dir: string;
  let url: string;
  let port: number;
  const answers: ServerResponse[] = [];

  beforeAll(async () => {
    dir = tempDir();
    server = await createServer(
      { ...DEFAULTS, bind: '127.0.0.1:0', dataDir: dir },
      pino({ level: 'silent' }),
      () => undefined,
    );
    port = await server.listen();
    url = `http://127.0.0.1:${port}`;
    server.app.server.on('request', (req, res: ServerResponse) => {
      if (req.url === '/index/i/query') answers.push(res);
    });
    await fullRows(url, 10);
  }, 300_000);

  afterAll(async () => {
    server?.app.server.closeAllConnections();
    await server?.close();
    removeDir(dir);
  });

  it('answers /status while the answer is still being written, then delivers all of it', async () => {
    const sock = connect(port, '127.0.0.1');
    const body = 'Row(g=1)';
    sock.write(`POST /index/i/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    const chunks: Buffer[] = [];
    let received = 0;
    sock.on('data', (d: Buffer) => {
      chunks.push(d);
      received += d.length;
    });
    await until(() => received > 0, { what: 'the first bytes of the answer' });
    sock.pause();
    const status = await fetch(`${url}/status`);
    expect(status.status).toBe(200);
    // Ordering: /status was answered while the answer had not been ended by the server (a
    // one-string answer is ended, all of it buffered, the moment it is sent).
    expect(answers).toHaveLength(1);
    const res = answers[0];
    expect(res.writableEnded).toBe(false);
    // And what waits in the server's buffers is a slice, not the answer (about 90 MB).
    expect(res.writableLength).toBeLessThan(8 * MIB);
    sock.resume();
    await new Promise<void>((resolve) => sock.once('end', () => resolve()));
    const raw = Buffer.concat(chunks).toString('latin1');
    const split = raw.indexOf('\r\n\r\n');
    expect(raw.slice(0, split)).toMatch(/transfer-encoding: chunked/i);
    expect(raw.slice(0, split)).toMatch(/content-type: application\/json/i);
    const text = dechunk(raw.slice(split + 4));
    const parsed = JSON.parse(text) as { results: { columns: number[]; attrs: object }[] };
    expect(parsed.results[0].attrs).toEqual({});
    const cols = parsed.results[0].columns;
    expect(cols.length).toBe(10 * SHARD);
    expect(cols[0]).toBe(0);
    expect(cols[cols.length - 1]).toBe(10 * SHARD - 1);
    expect(res.writableEnded).toBe(true);
  }, 300_000);

  it('a client that goes away stops the writing', async () => {
    answers.length = 0;
    const sock = connect(port, '127.0.0.1');
    const body = 'Row(g=1)';
    sock.write(`POST /index/i/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    let received = 0;
    sock.on('data', (d: Buffer) => {
      received += d.length;
    });
    await until(() => received > 0, { what: 'the first bytes of the answer' });
    sock.destroy();
    const res = answers[0];
    await until(() => res.destroyed, { what: 'the answer closed' });
    // Nothing more is produced for it: the server neither ended it nor wrote past the close.
    const written = res.socket?.bytesWritten ?? 0;
    expect(res.writableEnded).toBe(false);
    expect((await fetch(`${url}/status`)).status).toBe(200);
    expect(res.socket?.bytesWritten ?? written).toBe(written);
  }, 120_000);
});

/** The body of a chunked HTTP answer. */
function dechunk(s: string): string {
  const parts: string[] = [];
  let at = 0;
  for (;;) {
    const eol = s.indexOf('\r\n', at);
    const n = Number.parseInt(s.slice(at, eol), 16);
    if (n === 0) break;
    parts.push(s.slice(eol + 2, eol + 2 + n));
    at = eol + 2 + n + 2;
  }
  return Buffer.from(parts.join(''), 'latin1').toString('utf8');
}
