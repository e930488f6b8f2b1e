// What each feature of bitledger's request path costs a query, timed in this process on the
// code the server runs (best of interleaved rounds, so the machine's background load falls on
// all alike): request metrics, the metrics label, the access log (over its cap: counted only),
// the lean query path's door (its path and security checks: lean-query.ts), the client-gone
// signal, the deadline, PQL parsing, and the JSON encoding of a Count and of a TopN answer.
// Reported beside a whole request's time at the measured rate (issue 24).
import { EventEmitter } from 'node:events';
import { openSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { pino } from 'pino';
import { stringify } from '../../src/encoding/json.js';
import { queryResponseJson } from '../../src/encoding/query-json.js';
import { queryBudget } from '../../src/executor/budget.js';
import type { QueryResponse } from '../../src/executor/result.js';
import { AccessLog } from '../../src/http/access-log.js';
import { firstPqlCall } from '../../src/http/pql-label.js';
import { RequestLog } from '../../src/http/request-log.js';
import { queryPathIndex } from '../../src/http/lean-query.js';
import { SecurityChecks } from '../../src/http/security.js';
import { ClientGone } from '../../src/http/routes/query-routes.js';
import { ServerMetrics } from '../../src/metrics/server-metrics.js';
import { parse } from '../../src/pql/index.js';
import { QueryTexts } from '../../src/service/query-texts.js';
import type { Reporter } from './report.js';
import { bestOfRounds } from './stats.js';

const REPS = 1000;

export async function requestFeatureCosts(r: Reporter, count: string, topN: string, requestUs: number): Promise<void> {
  const metrics = new ServerMetrics();
  const access = new AccessLog(pino({ level: 'info' }, pino.destination({ fd: openSync('/dev/null', 'w') })), 1);
  const serverLog = pino({ level: 'warn' }, pino.destination({ fd: openSync('/dev/null', 'w') }));
  access.record({ reqId: 'a-0', method: 'POST', url: '/index/i/query', status: 200, ms: 1, bytes: 16 });
  const body = Buffer.from(count);
  const texts = new QueryTexts();
  const parsed = parse(count);
  texts.keep(count, { parsed, legacy: false, calls: parsed.calls.map((c) => c.name) });
  const countAnswer: QueryResponse = { results: [{ type: 'count', n: 169_184 }] };
  const pairs = Array.from({ length: 10 }, (_, k) => ({ id: 17 * k + 3, count: 1734 - k }));
  const topNAnswer: QueryResponse = { results: [{ type: 'pairs', pairs }] };
  const each = (f: (k: number) => unknown) => () => {
    for (let k = 0; k < REPS; k++) f(k);
  };
  const queryPosts = metrics.routeRequests('POST', '/index/:index/query');
  const checks = new SecurityChecks({ bindHost: '127.0.0.1', scheme: 'http', allowedOrigins: [] });
  const t = await bestOfRounds({
    metrics: each((k) => {
      metrics.observeRequest('POST', '/index/:index/query', 200, 0.3 + k * 1e-6);
      metrics.observePql('Count', 0.3);
    }),
    boundMetrics: each((k) => {
      queryPosts(200, 0.3 + k * 1e-6);
      metrics.observePql('Count', 0.3);
    }),
    leanDoor: each(
      () =>
        queryPathIndex('/index/i/query') !== undefined &&
        checks.verdict({
          method: 'POST',
          url: '/index/i/query',
          route: '/index/:index/query',
          host: '127.0.0.1:10101',
          origin: undefined,
          authorization: undefined,
        }),
    ),
    label: each(() => firstPqlCall(body, 'text/plain')),
    accessLog: each((k) =>
      access.record({ reqId: `a-${k}`, method: 'POST', url: '/index/i/query', status: 200, ms: 0.3, bytes: 16 }),
    ),
    abortController: each(() => {
      const ac = new AbortController();
      const raw = new EventEmitter();
      raw.once('close', () => ac.abort());
      return ac.signal;
    }),
    clientGone: each(() => new ClientGone(new EventEmitter() as unknown as ServerResponse).aborted),
    deadline: each(() => queryBudget(0, undefined)),
    // What fastify does for a request when it is given a logger instance: a pino child with the
    // request id, and a 'finish' and an 'error' listener on the response, removed at its end.
    pinoChild: each((k) => serverLog.child({ reqId: `r-${k}` }, {})),
    requestLog: each((k) => new RequestLog(serverLog, { reqId: `r-${k}` }, {})),
    responseListeners: each(() => {
      const res = new EventEmitter();
      const done = (): void => {
        res.removeListener('finish', done);
        res.removeListener('error', done);
      };
      res.on('finish', done);
      res.on('error', done);
      res.emit('finish');
    }),
    parseCount: each(() => parse(count)),
    keptCount: each(() => texts.get(count)),
    parseTopN: each(() => parse(topN)),
    jsonCount: each(() => stringify(queryResponseJson(countAnswer))),
    jsonTopN: each(() => stringify(queryResponseJson(topNAnswer))),
  });
  const us = (ms: number): number => (ms * 1000) / REPS;
  const rows: [string, number][] = [
    ['request metrics (2 labelled histograms)', us(t.metrics)],
    ['  the same, keys made once (the query route: ServerMetrics.routeRequests)', us(t.boundMetrics)],
    ["the lean query path's door: path and security checks (lean-query.ts)", us(t.leanDoor)],
    ['the PQL call label', us(t.label)],
    ['access log, over its cap (counted)', us(t.accessLog)],
    ['client gone: a flag, its AbortSignal made on demand', us(t.clientGone)],
    ['deadline (query budget)', us(t.deadline)],
    ['req.log: a RequestLog, its pino child made on first use (request-log.ts)', us(t.requestLog)],
    ['parse Count(Intersect(Row, Row))', us(t.parseCount)],
    ['  the same text kept from an earlier request (QueryTexts)', us(t.keptCount)],
    ['parse TopN(g, n=10)', us(t.parseTopN)],
    ['JSON answer of Count', us(t.jsonCount)],
    ['JSON answer of TopN (10 pairs)', us(t.jsonTopN)],
  ];
  r.figure('  (before: an AbortController and close listener a request)', us(t.abortController), 'µs');
  r.figure('  (before: the pino child fastify made a request, with a logger instance)', us(t.pinoChild), 'µs');
  r.figure(
    "  (before: a response's 'finish' and 'error' listeners, fastify's with a logger or an onResponse hook)",
    us(t.responseListeners),
    'µs',
  );
  r.note(`request-path features, µs a request (share of a Count request, ${requestUs.toFixed(0)} µs at 1 conn):`);
  for (const [name, v] of rows) r.figure(`  feature: ${name}`, v, 'µs');
  // A Count request pays the kept text's lookup, not a parse (bench's text repeats), and the
  // query route's metrics with keys made once.
  const total =
    rows.reduce((n, [, v]) => n + v, 0) - us(t.parseTopN) - us(t.jsonTopN) - us(t.parseCount) - us(t.metrics);
  r.figure('  features of a Count request together / its time', total / requestUs, '×');
}
