// The phased workload of the history tests (not a test file itself): writes in phases (sets,
// imports, int values, keys, a ClearRow, a deleted field, a deleted index, snapshots between),
// and "the state at a moment" as the schema plus the answers to a fixed query set.
import { expect } from 'vitest';
import { encodeImportRequest, encodeImportValueRequest } from '../../src/encoding/import-request-encode.js';
import type { TestServer } from '../helpers/server.js';

const PB = { 'content-type': 'application/x-protobuf' };

export interface Point {
  name: string;
  seq: number;
  time: string;
  answers: string;
}

type Inject = TestServer['app']['inject'];
export async function req(
  s: TestServer,
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  payload?: string | Uint8Array,
  headers: Record<string, string> = {},
) {
  const res = await (s.app.inject as Inject)({
    method,
    url,
    payload: payload instanceof Uint8Array ? Buffer.from(payload) : payload,
    headers,
  });
  return { status: res.statusCode, body: res.body };
}
export async function ok(
  s: TestServer,
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  payload?: string | Uint8Array,
  headers?: Record<string, string>,
) {
  const r = await req(s, method, url, payload, headers);
  expect(r.status, `${method} ${url}: ${r.body}`).toBe(200);
  return r.body;
}

export const QUERIES: [string, string][] = [
  ['i', 'Row(f=1)'],
  ['i', 'Row(f=2)'],
  ['i', 'Count(Union(Row(f=1), Row(f=2), Row(f=3)))'],
  ['i', 'Row(n > 10)'],
  ['i', 'Sum(field=n)'],
  ['i', 'Row(g=4)'],
  ['k', 'Row(kf="red")'],
  ['k', 'Count(Row(kf="blue"))'],
];

/** Schema plus every query's status and body: what "the state at that moment" means here. */
export async function answers(s: TestServer, qs = ''): Promise<string> {
  const schema = await req(s, 'GET', '/schema');
  const results = [];
  for (const [index, pql] of QUERIES) results.push(await req(s, 'POST', `/index/${index}/query${qs}`, pql));
  return JSON.stringify({ schema: qs === '' ? JSON.parse(schema.body) : undefined, results });
}

export async function newest(s: TestServer): Promise<{ seq: number; time: string }> {
  return (JSON.parse(await ok(s, 'GET', '/internal/history')) as { newest: { seq: number; time: string } }).newest;
}

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const PHASES: [string, (s: TestServer) => Promise<unknown>][] = [
  [
    'schema and sets',
    async (s) => {
      await ok(s, 'POST', '/index/i', '');
      await ok(s, 'POST', '/index/i/field/f', '');
      await ok(s, 'POST', '/index/i/field/g', '');
      await ok(s, 'POST', '/index/i/field/n', '{"options":{"type":"int","min":0,"max":1000}}');
      await ok(s, 'POST', '/index/i/query', 'Set(1, f=1) Set(2, f=1) Set(3, f=2) Set(9, g=4)');
    },
  ],
  [
    'import',
    (s) =>
      ok(
        s,
        'POST',
        '/index/i/field/f/import',
        encodeImportRequest({ index: 'i', field: 'f', shard: 0, rowIds: [1, 2, 3, 3], columnIds: [10, 20, 30, 31] }),
        PB,
      ),
  ],
  [
    'snapshot and int values',
    async (s) => {
      await ok(s, 'POST', '/internal/snapshot');
      await ok(
        s,
        'POST',
        '/index/i/field/n/import',
        encodeImportValueRequest({ index: 'i', field: 'n', shard: 0, columnIds: [1, 2, 3], values: [5n, 50n, 500n] }),
        PB,
      );
      await ok(s, 'POST', '/index/i/query', 'Set(4, n=42)');
    },
  ],
  [
    'keys',
    async (s) => {
      await ok(s, 'POST', '/index/k', '{"options":{"keys":true}}');
      await ok(s, 'POST', '/index/k/field/kf', '{"options":{"keys":true}}');
      await ok(s, 'POST', '/index/k/query', 'Set("a", kf="red") Set("b", kf="blue") Set("c", kf="red")');
    },
  ],
  [
    'ClearRow',
    async (s) => {
      await ok(s, 'POST', '/index/i/query', 'ClearRow(f=1)');
      await ok(s, 'POST', '/internal/snapshot');
      await ok(s, 'POST', '/index/i/query', 'Set(100, f=2)');
    },
  ],
  ['deleted field', (s) => ok(s, 'DELETE', '/index/i/field/g')],
  ['deleted index', (s) => ok(s, 'DELETE', '/index/k')],
];

export function stripSchema(a: string): string {
  const o = JSON.parse(a) as { results: unknown };
  return JSON.stringify({ schema: undefined, results: o.results });
}
