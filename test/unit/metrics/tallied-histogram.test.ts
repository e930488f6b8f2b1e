// The hand-counted request histograms must expose exactly what prom-client's Histogram exposed
// for the same observations: same text (names, help, labels, buckets, order, sums) and same JSON.
import { describe, expect, it } from 'vitest';
import { Histogram, Registry } from 'prom-client';
import { TalliedHistogram } from '../../../src/metrics/tallied-histogram.js';
import { ServerMetrics } from '../../../src/metrics/server-metrics.js';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

// Label sets first seen in a mixed order, values on, between and beyond the bounds.
const REQUESTS: [string, string, number, number][] = [
  ['POST', '/index/:index/query', 200, 0.42],
  ['GET', '/status', 200, 0.5],
  ['POST', '/index/:index/query', 400, 3.1],
  ['GET', 'unmatched', 404, 0],
  ['POST', '/index/:index/query', 200, 12_000],
  ['GET', '/status', 200, 1],
  ['GET', '/a "quoted"\\path\nx', 500, 7.77],
  ['POST', '/index/:index/query', 200, 0.0999],
  ['POST', '/index/:index/query', 200, 2500],
];
const CALLS: [string, number][] = [
  ['Count', 0.3],
  ['TopN', 11],
  ['Count', 0.7],
  ['(protobuf)', 250],
  ['Count', 99_999],
];

function reference(): {
  registry: Registry;
  requests: Histogram<'method' | 'route' | 'status'>;
  pql: Histogram<'call'>;
} {
  const registry = new Registry();
  const requests = new Histogram({
    name: 'bitledger_http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern and status',
    labelNames: ['method', 'route', 'status'],
    buckets: BUCKETS,
    registers: [registry],
  });
  const pql = new Histogram({
    name: 'bitledger_pql_request_duration_seconds',
    help: 'Query requests by their first PQL call',
    labelNames: ['call'],
    buckets: BUCKETS,
    registers: [registry],
  });
  for (const [method, route, status, ms] of REQUESTS) requests.observe({ method, route, status }, ms / 1000);
  for (const [call, ms] of CALLS) pql.observe({ call }, ms / 1000);
  return { registry, requests, pql };
}

/** The text of the named families in `text`, each from its # HELP line to the blank line after it. */
function families(text: string, names: string[]): string {
  return text
    .split('\n\n')
    .map((block) => block.trim())
    .filter((block) => names.some((n) => block.startsWith(`# HELP ${n} `)))
    .join('\n\n');
}

describe('TalliedHistogram', () => {
  it('renders the same text and JSON as prom-client for the same observations', async () => {
    const ref = reference();
    const registry = new Registry();
    const tallied = new TalliedHistogram<'method' | 'route' | 'status'>({
      name: 'bitledger_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: BUCKETS,
      registers: [registry],
    });
    const pql = new TalliedHistogram<'call'>({
      name: 'bitledger_pql_request_duration_seconds',
      help: 'Query requests by their first PQL call',
      labelNames: ['call'],
      buckets: BUCKETS,
      registers: [registry],
    });
    for (const [method, route, status, ms] of REQUESTS) {
      const key = `${method} ${status} ${route}`;
      if (!tallied.tally(key, ms / 1000)) tallied.first(key, { method, route, status }, ms / 1000);
    }
    for (const [call, ms] of CALLS) if (!pql.tally(call, ms / 1000)) pql.first(call, { call }, ms / 1000);

    const want = await ref.registry.metrics();
    expect(want).toContain('bitledger_http_request_duration_seconds_bucket{le="0.0005",method="POST"');
    expect(await registry.metrics()).toBe(want);
    expect(await registry.getMetricsAsJSON()).toEqual(await ref.registry.getMetricsAsJSON());

    tallied.reset();
    ref.requests.reset();
    expect(await registry.metrics()).toBe(await ref.registry.metrics());
  });

  it('is what ServerMetrics exposes for the requests it observes', async () => {
    const metrics = new ServerMetrics();
    for (const [method, route, status, ms] of REQUESTS) metrics.observeRequest(method, route, status, ms);
    for (const [call, ms] of CALLS) metrics.observePql(call, ms);
    const names = ['bitledger_http_request_duration_seconds', 'bitledger_pql_request_duration_seconds'];
    const got = families(await metrics.text(), names);
    expect(got).toBe(families(await reference().registry.metrics(), names));
    // Two families of two header lines; 5 request and 3 call label sets of 14 bounds, +Inf, sum, count.
    expect(got.split('\n').filter((l) => l !== '').length).toBe(2 * 2 + (5 + 3) * (BUCKETS.length + 3));
  });
});
