// Access log (one line per request, capped with a per-second summary), slow-query log (PQL cut to
// a length) and request ids in the log lines.
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createServer, type Server } from '../../src/app.js';
import { DEFAULTS, type Config } from '../../src/config/config.js';
import { AccessLog } from '../../src/http/access-log.js';
import { encodeImportRoaringRequest } from '../../src/encoding/public-proto.js';
import { RoaringBitmap32 } from '../../src/roaring/bitmap.js';
import { encodePilosaRoaring } from '../../src/roaring/pilosa-roaring.js';
import { parsePromText } from '../helpers/prom-text.js';
import { removeDir, tempDir } from '../helpers/server.js';
import { until } from '../helpers/until.js';

interface Line {
  msg: string;
  [k: string]: unknown;
}

function memoryLogger(): { logger: pino.Logger; lines: Line[] } {
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as Line);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

let server: Server | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.close();
  if (dir !== undefined) removeDir(dir);
  server = undefined;
});

async function start(overrides: Partial<Config>, logger: pino.Logger): Promise<Server> {
  dir = tempDir();
  server = await createServer(
    { ...DEFAULTS, bind: '127.0.0.1:0', dataDir: dir, ...overrides },
    logger,
    () => undefined,
  );
  await server.app.ready();
  return server;
}

const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

describe('access log', () => {
  it('writes one line per request with method, url, status, ms, bytes and the request id', async () => {
    const { logger, lines } = memoryLogger();
    const s = await start({}, logger);
    await s.app.inject({ method: 'POST', url: '/index/a', payload: '{}', headers: { 'x-request-id': 'req-1' } });
    await s.app.inject({ method: 'GET', url: '/index/zzz' });
    await settle();
    const access = lines.filter((l) => l.msg === 'request');
    expect(access).toHaveLength(2);
    expect(access[0]).toMatchObject({ reqId: 'req-1', method: 'POST', url: '/index/a', status: 200 });
    expect(typeof access[0].ms).toBe('number');
    expect(access[0].bytes).toBeGreaterThan(0);
    expect(access[1]).toMatchObject({ method: 'GET', url: '/index/zzz', status: 404 });
  });

  it('gives an answer written in slices its line, with the bytes written, and counts it in the metrics', async () => {
    const { logger, lines } = memoryLogger();
    const s = await start({}, logger);
    await s.app.inject({ method: 'POST', url: '/index/i', payload: '' });
    await s.app.inject({ method: 'POST', url: '/index/i/field/g', payload: '' });
    const all = new RoaringBitmap32();
    all.addRange(0, 1 << 20);
    const rows = encodePilosaRoaring(new Map([[1, all]]));
    const imported = await s.app.inject({
      method: 'POST',
      url: '/index/i/field/g/import-roaring/0',
      payload: Buffer.from(encodeImportRoaringRequest({ clear: false, views: [{ name: '', data: rows }] })),
      headers: { 'content-type': 'application/x-protobuf' },
    });
    expect(imported.statusCode).toBe(200);
    const queries = async (): Promise<number> => {
      const text = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
      const count = parsePromText(text).samples.find(
        (x) => x.name === 'bitledger_http_request_duration_seconds_count' && x.labels.route === '/index/:index/query',
      );
      return count?.value ?? 0;
    };
    const before = await queries();
    // A 1M-column row: about 7 MB of JSON, past the 1 MB from which answers are written in slices.
    const r = await s.app.inject({
      method: 'POST',
      url: '/index/i/query',
      payload: 'Row(g=1)',
      headers: { 'x-request-id': 'big-1' },
    });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-length']).toBeUndefined();
    await until(() => lines.some((l) => l.reqId === 'big-1'), { what: "the sliced answer's access line" });
    const line = lines.find((l) => l.msg === 'request' && l.reqId === 'big-1');
    expect(line).toMatchObject({ method: 'POST', url: '/index/i/query', status: 200, bytes: r.rawPayload.length });
    expect(await queries()).toBe(before + 1);
  });

  it('writes one line for a HEAD request (the route fastify makes from a GET) and one for a 404', async () => {
    const { logger, lines } = memoryLogger();
    const s = await start({}, logger);
    await s.app.inject({ method: 'HEAD', url: '/schema', headers: { 'x-request-id': 'head-1' } });
    await s.app.inject({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': 'missing-1' } });
    await until(() => lines.some((l) => l.reqId === 'missing-1'), { what: "the 404's access line" });
    expect(lines.filter((l) => l.msg === 'request' && l.reqId === 'head-1')).toEqual([
      expect.objectContaining({ method: 'HEAD', status: 200 }),
    ]);
    expect(lines.filter((l) => l.msg === 'request' && l.reqId === 'missing-1')).toEqual([
      expect.objectContaining({ method: 'GET', status: 404 }),
    ]);
  });

  it('is off with --access-log-per-second 0', async () => {
    const { logger, lines } = memoryLogger();
    const s = await start({ accessLogPerSecond: 0 }, logger);
    await s.app.inject({ method: 'GET', url: '/schema' });
    await settle();
    expect(lines.filter((l) => l.msg === 'request')).toHaveLength(0);
  });

  it('caps lines per second and summarises the rest', () => {
    const { logger, lines } = memoryLogger();
    const log = new AccessLog(logger, 3);
    const e = { reqId: 'x', method: 'GET', url: '/', status: 200, ms: 1, bytes: 1 };
    for (let i = 0; i < 10; i++) log.record(e, 1_000_000 + i);
    log.record(e, 1_001_000); // next second: the summary of the last, then this line
    expect(lines.filter((l) => l.msg === 'request')).toHaveLength(4);
    const summary = lines.filter((l) => l.unlogged !== undefined);
    expect(summary).toHaveLength(1);
    expect(summary[0]).toMatchObject({ unlogged: 7, logged: 3 });
  });
});

describe('slow-query log', () => {
  it('logs queries at or over --slow-query-ms with the PQL cut to a length', async () => {
    const { logger, lines } = memoryLogger();
    // Every query takes more than a microsecond.
    const s = await start({ slowQueryMs: 0.001 }, logger);
    await s.app.inject({ method: 'POST', url: '/index/a', payload: '{}' });
    await s.app.inject({ method: 'POST', url: '/index/a/field/f', payload: '{}' });
    const long = `Count(Union(${Array.from({ length: 200 }, (_, i) => `Row(f=${i})`).join(', ')}))`;
    await s.app.inject({ method: 'POST', url: '/index/a/query', payload: long, headers: { 'x-request-id': 'slow-1' } });
    await settle();
    const slow = lines.filter((l) => l.msg === 'slow query');
    expect(slow).toHaveLength(1);
    expect(slow[0]).toMatchObject({ reqId: 'slow-1', index: 'a' });
    expect(slow[0].pql).toBe(`${long.slice(0, 500)}…`);
  });
});
