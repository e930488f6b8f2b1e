// /metrics, /health, /ready and the startup phase: metrics parse as Prometheus text and move with
// requests, commits and snapshots; /ready is 503 while the log replays (the socket is up before
// replay) and 200 after; request ids are echoed.
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { launchServer, type Server } from '../../src/app.js';
import { DEFAULTS } from '../../src/config/config.js';
import { parsePromText, promValue } from '../helpers/prom-text.js';
import { removeDir, startServer, stopServer, tempDir, type TestServer } from '../helpers/server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await stopServer(server);
  server = undefined;
});

async function scrape(s: Server): Promise<ReturnType<typeof parsePromText>> {
  const r = await s.app.inject({ method: 'GET', url: '/metrics' });
  expect(r.statusCode).toBe(200);
  expect(r.headers['content-type']).toMatch(/^text\/plain/);
  return parsePromText(r.body);
}

describe('GET /metrics', () => {
  it('parses as Prometheus text and its counters move with requests, commits and snapshots', async () => {
    server = await startServer();
    const s = server;
    const before = await scrape(s);
    expect(before.types.get('bitledger_http_request_duration_seconds')).toBe('histogram');
    expect(before.types.get('process_cpu_seconds_total')).toBe('counter');
    await s.app.inject({ method: 'POST', url: '/index/m', payload: '{}' });
    await s.app.inject({ method: 'POST', url: '/index/m/field/f', payload: '{}' });
    for (let i = 0; i < 5; i++)
      expect(
        (await s.app.inject({ method: 'POST', url: '/index/m/query', payload: `Set(${i * 100_000}, f=1)` })).statusCode,
      ).toBe(200);
    expect((await s.app.inject({ method: 'POST', url: '/index/m/query', payload: 'Count(Row(f=1))' })).statusCode).toBe(
      200,
    );
    expect(
      (await s.app.inject({ method: 'POST', url: '/index/nope/query', payload: 'Count(Row(f=1))' })).statusCode,
    ).toBe(404);
    await s.engine.snapshot();
    const after = await scrape(s);
    const q = { route: '/index/:index/query', method: 'POST' };
    expect(promValue(after.samples, 'bitledger_http_request_duration_seconds_count', { ...q, status: '200' })).toBe(6);
    expect(promValue(after.samples, 'bitledger_pql_request_duration_seconds_count', { call: 'Set' })).toBe(5);
    expect(promValue(after.samples, 'bitledger_pql_request_duration_seconds_count', { call: 'Count' })).toBe(2);
    expect(promValue(after.samples, 'bitledger_http_errors_total', { status: '404' })).toBe(1);
    // 2 schema events + 5 sets, each its own group commit here (sequential requests).
    expect(promValue(after.samples, 'bitledger_log_sequence')).toBe(7);
    expect(
      promValue(after.samples, 'bitledger_log_appended_records_total') -
        promValue(before.samples, 'bitledger_log_appended_records_total'),
    ).toBe(7);
    expect(promValue(after.samples, 'bitledger_group_commit_records_count')).toBe(7);
    expect(promValue(after.samples, 'bitledger_log_append_duration_seconds_count')).toBe(7);
    expect(promValue(after.samples, 'bitledger_snapshots_total')).toBe(
      promValue(before.samples, 'bitledger_snapshots_total') + 1,
    );
    expect(promValue(after.samples, 'bitledger_snapshot_sequence')).toBe(7);
    expect(promValue(after.samples, 'bitledger_snapshot_age_seconds')).toBeGreaterThanOrEqual(0);
    // 5 bits in f, and the same 5 columns in the index's existence field.
    expect(promValue(after.samples, 'bitledger_index_bits', { index: 'm' })).toBe(10);
    expect(promValue(after.samples, 'bitledger_index_bytes', { index: 'm' })).toBeGreaterThan(0);
    expect(promValue(after.samples, 'bitledger_ready')).toBe(1);
  });

  it('echoes a plain X-Request-Id and generates one otherwise', async () => {
    server = await startServer();
    const given = await server.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'abc-123' } });
    expect(given.headers['x-request-id']).toBe('abc-123');
    const made = await server.app.inject({
      method: 'GET',
      url: '/health',
      headers: { 'x-request-id': 'bad id\u0001' },
    });
    expect(made.headers['x-request-id']).toMatch(/^[a-z0-9]+-[a-z0-9]+$/);
    expect(made.json()).toEqual({ status: 'ok', state: 'NORMAL' });
  });
});

describe('startup: the socket answers while the log replays', () => {
  it('/ready and /status are 503 with progress during replay, other routes 503 starting; 200 after', async () => {
    const dataDir = tempDir();
    try {
      const first = await startServer({ dataDir });
      await first.app.inject({ method: 'POST', url: '/index/r', payload: '{}' });
      await first.app.inject({ method: 'POST', url: '/index/r/field/f', payload: '{}' });
      for (let i = 0; i < 20; i++)
        await first.app.inject({ method: 'POST', url: '/index/r/query', payload: `Set(${i}, f=1)` });
      await first.close();

      // Replay waits at its first progress report until the test has looked.
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let reported!: () => void;
      const atGate = new Promise<void>((r) => (reported = r));
      const cfg = { ...DEFAULTS, bind: '127.0.0.1:0', dataDir };
      const launch = await launchServer(cfg, pino({ level: 'silent' }), () => undefined, {
        onReplayProgress: async () => {
          reported();
          await gate;
        },
      });
      await atGate;
      const url = `http://127.0.0.1:${launch.port}`;
      expect((await fetch(`${url}/health`)).status).toBe(200);
      const ready = await fetch(`${url}/ready`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { reason: string }).reason).toMatch(/replaying the log \(0\/22 events\)/);
      const status = await fetch(`${url}/status`);
      expect(status.status).toBe(503);
      expect(await status.json()).toEqual({ state: 'STARTING', progress: { phase: 'replay', done: 0, total: 22 } });
      const q = await fetch(`${url}/index/r/query`, { method: 'POST', body: 'Count(Row(f=1))' });
      expect(q.status).toBe(503);
      expect(await q.text()).toMatch(/starting/);
      expect(
        parsePromText(await (await fetch(`${url}/metrics`)).text()).samples.find(
          (x) => x.name === 'bitledger_replay_records' && x.labels.kind === 'total',
        )?.value,
      ).toBe(22);

      release();
      const booted = await launch.booted;
      try {
        expect((await fetch(`${url}/ready`)).status).toBe(200);
        expect(((await (await fetch(`${url}/status`)).json()) as { state: string }).state).toBe('NORMAL');
        const count = await fetch(`${url}/index/r/query`, { method: 'POST', body: 'Count(Row(f=1))' });
        expect(await count.json()).toEqual({ results: [20] });
      } finally {
        await booted.close();
      }
    } finally {
      removeDir(dataDir);
    }
  });
});
