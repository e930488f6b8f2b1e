// Every argument checked at the edge (issue 23): a time outside what a JS Date can hold
// (atTime, from/to) is a 400 naming the argument, never a 500 "Invalid time value", and numbers
// too large for their argument are 400s; nothing changes and the server keeps answering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopServer, type TestServer } from '../helpers/server.js';

let s: TestServer;

const post = async (url: string, payload: string): Promise<{ status: number; error: string }> => {
  const r = await s.app.inject({ method: 'POST', url, payload });
  return { status: r.statusCode, error: r.statusCode === 200 ? '' : (JSON.parse(r.body) as { error: string }).error };
};

beforeAll(async () => {
  s = await startServer();
  expect((await post('/index/i', '')).status).toBe(200);
  expect((await post('/index/i/field/t', '{"options":{"type":"time","timeQuantum":"YMD"}}')).status).toBe(200);
  expect((await post('/index/i/query', 'Set(1, t=1, 2017-01-02T03:04)')).status).toBe(200);
});

afterAll(() => stopServer(s));

describe('times outside the Date range', () => {
  it('atTime past 8.64e15 ms is a 400 naming atTime', async () => {
    for (const at of ['8640000000001', '99999999999999999999']) {
      const r = await post(`/index/i/query?atTime=${at}`, 'Count(Row(t=1))');
      expect(r.status).toBe(400);
      expect(r.error).toMatch(new RegExp(`^atTime ${at} is outside the times this server can represent`));
    }
    // At the edge of the range it is a time like any other: before the history, so a 400 of its own.
    const edge = await post('/index/i/query?atTime=8640000000000', 'Count(Row(t=1))');
    expect(edge.error).not.toMatch(/Invalid time value|outside the times/);
  });

  it('from/to past the range are 400s naming the argument', async () => {
    for (const [arg, q] of [
      ['from', 'Row(t=1, from=8640000000001)'],
      ['to', 'Row(t=1, from=0, to=-8640000000001)'],
      ['to', 'Count(Row(t=1, to=9223372036854775807))'],
    ]) {
      const r = await post('/index/i/query', q);
      expect(r.status, q).toBe(400);
      expect(r.error).toMatch(new RegExp(`parsing ${arg} time: -?\\d+ seconds is outside the times`));
    }
    const ok = await post('/index/i/query', 'Count(Row(t=1, from=0, to=8640000000))');
    expect(ok.status).toBe(200);
  });

  it('other numbers past their argument are 400s, and the state is unchanged', async () => {
    for (const url of [
      '/index/i/query?atSeq=99999999999999999999',
      '/index/i/query?shards=99999999999999999999',
      '/index/i/query?timeout=-5',
    ]) {
      expect((await post(url, 'Count(Row(t=1))')).status, url).toBe(400);
    }
    for (const q of ['Set(18446744073709551616, t=1)', 'TopN(t, n=-1)', 'Rows(t, limit=99999999999999999999)']) {
      expect((await post('/index/i/query', q)).status, q).toBe(400);
    }
    const r = await s.app.inject({ method: 'POST', url: '/index/i/query', payload: 'Count(Row(t=1))' });
    expect(JSON.parse(r.body)).toEqual({ results: [1] });
  });
});
