// The bad-input catalogue: each case checked for status, body, and unchanged state afterwards;
// the server keeps serving throughout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;

async function req(
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  payload?: string | Buffer,
  headers: Record<string, string> = {},
) {
  const res = await server.app.inject({ method, url, payload, headers });
  return { status: res.statusCode, body: res.body };
}

/** Everything a bad request could have touched: schema and the data of every field. */
async function stateFingerprint(): Promise<string> {
  const schema = (await req('GET', '/schema')).body;
  const q = (await req('POST', '/index/i/query', 'Row(f=1)Row(f=2)Count(Row(b=true))Sum(field=n)Row(m=1)Row(m=2)'))
    .body;
  const k = (await req('POST', '/index/k/query', 'Row(f="a")')).body;
  return schema + q + k;
}

beforeAll(async () => {
  server = await startServer({ maxBodyBytes: 1024 * 1024 });
  const setup: [string, string, string?][] = [
    ['POST', '/index/i'],
    ['POST', '/index/i/field/f'],
    ['POST', '/index/i/field/m', '{"options":{"type":"mutex"}}'],
    ['POST', '/index/i/field/b', '{"options":{"type":"bool"}}'],
    ['POST', '/index/i/field/n', '{"options":{"type":"int","min":-100,"max":100}}'],
    ['POST', '/index/i/field/t', '{"options":{"type":"time","timeQuantum":"YMD"}}'],
    ['POST', '/index/k', '{"options":{"keys":true}}'],
    ['POST', '/index/k/field/f', '{"options":{"keys":true}}'],
  ];
  for (const [m, u, b] of setup) expect((await req(m as 'POST', u, b)).status).toBe(200);
  const w = await req(
    'POST',
    '/index/i/query',
    'Set(1, f=1) Set(2, f=1) Set(3, m=1) Set(4, b=true) Set(5, n=42) Set(1048577, f=2)',
  );
  expect(w.status).toBe(200);
  expect((await req('POST', '/index/k/query', 'Set("x", f="a")')).status).toBe(200);
});

afterAll(async () => {
  await server.close();
  removeDir(server.dataDir);
});

type Case = {
  name: string;
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  status: number;
  message: RegExp;
  shape: 'admin' | 'query';
};

const long = 'a'.repeat(65);
const cases: Case[] = [
  {
    name: 'index name with capitals',
    method: 'POST',
    url: '/index/Bad',
    status: 400,
    message: /invalid index or field name/,
    shape: 'admin',
  },
  {
    name: 'index name starting with a digit',
    method: 'POST',
    url: '/index/9a',
    status: 400,
    message: /invalid index or field name/,
    shape: 'admin',
  },
  {
    name: 'index name of 65 characters',
    method: 'POST',
    url: `/index/${long}`,
    status: 400,
    message: /at most 64 characters/,
    shape: 'admin',
  },
  {
    name: 'index that exists',
    method: 'POST',
    url: '/index/i',
    status: 409,
    message: /index already exists/,
    shape: 'admin',
  },
  {
    name: 'malformed JSON body',
    method: 'POST',
    url: '/index/x',
    body: '{bad json',
    status: 400,
    message: /invalid JSON/,
    shape: 'admin',
  },
  {
    name: 'index option of the wrong type',
    method: 'POST',
    url: '/index/x',
    body: '{"options":{"keys":"yes"}}',
    status: 400,
    message: /keys must be a boolean/,
    shape: 'admin',
  },
  {
    name: 'unknown top-level key on index',
    method: 'POST',
    url: '/index/x',
    body: '{"option":{}}',
    status: 400,
    message: /unknown key: option/,
    shape: 'admin',
  },
  {
    name: 'field that exists',
    method: 'POST',
    url: '/index/i/field/f',
    status: 409,
    message: /field already exists/,
    shape: 'admin',
  },
  {
    name: 'field in a missing index',
    method: 'POST',
    url: '/index/missing/field/f',
    status: 404,
    message: /index not found/,
    shape: 'admin',
  },
  {
    name: 'field name starting with _',
    method: 'POST',
    url: '/index/i/field/_bad',
    status: 400,
    message: /invalid index or field name/,
    shape: 'admin',
  },
  {
    name: 'unknown field type',
    method: 'POST',
    url: '/index/i/field/g',
    body: '{"options":{"type":"foo"}}',
    status: 400,
    message: /invalid field type: foo/,
    shape: 'admin',
  },
  {
    name: 'option not valid for the type',
    method: 'POST',
    url: '/index/i/field/g',
    body: '{"options":{"type":"set","min":1}}',
    status: 400,
    message: /min does not apply to field type set/,
    shape: 'admin',
  },
  {
    name: 'int min above max',
    method: 'POST',
    url: '/index/i/field/g',
    body: '{"options":{"type":"int","min":10,"max":1}}',
    status: 400,
    message: /min cannot be greater than max/,
    shape: 'admin',
  },
  {
    name: 'time field without quantum',
    method: 'POST',
    url: '/index/i/field/g',
    body: '{"options":{"type":"time"}}',
    status: 400,
    message: /time quantum is required/,
    shape: 'admin',
  },
  {
    name: 'invalid time quantum',
    method: 'POST',
    url: '/index/i/field/g',
    body: '{"options":{"type":"time","timeQuantum":"XYZ"}}',
    status: 400,
    message: /invalid time quantum/,
    shape: 'admin',
  },
  {
    name: 'invalid cache type',
    method: 'POST',
    url: '/index/i/field/g',
    body: '{"options":{"cacheType":"fancy"}}',
    status: 400,
    message: /invalid cache type/,
    shape: 'admin',
  },
  {
    name: 'keys on a bool field',
    method: 'POST',
    url: '/index/i/field/g',
    body: '{"options":{"type":"bool","keys":true}}',
    status: 400,
    message: /keys does not apply to field type bool/,
    shape: 'admin',
  },
  {
    name: 'int min that is not a number',
    method: 'POST',
    url: '/index/i/field/g',
    body: '{"options":{"type":"int","min":"abc"}}',
    status: 400,
    message: /min must be an integer/,
    shape: 'admin',
  },
  {
    name: 'int max beyond 64 bits',
    method: 'POST',
    url: '/index/i/field/g',
    body: '{"options":{"type":"int","max":99999999999999999999}}',
    status: 400,
    message: /out of the signed 64-bit range/,
    shape: 'admin',
  },
  {
    name: 'unknown field option',
    method: 'POST',
    url: '/index/i/field/g',
    body: '{"options":{"colour":"red"}}',
    status: 400,
    message: /unknown key: colour/,
    shape: 'admin',
  },
  {
    name: 'delete a missing index',
    method: 'DELETE',
    url: '/index/missing',
    status: 404,
    message: /index not found/,
    shape: 'admin',
  },
  {
    name: 'delete a missing field',
    method: 'DELETE',
    url: '/index/i/field/missing',
    status: 404,
    message: /field not found/,
    shape: 'admin',
  },
  {
    name: 'get a missing index',
    method: 'GET',
    url: '/index/missing',
    status: 404,
    message: /index missing not found/,
    shape: 'admin',
  },
  {
    name: 'body larger than the limit',
    method: 'POST',
    url: '/index/i/query',
    body: 'Row(f=1)'.padEnd(2 * 1024 * 1024, ' '),
    status: 413,
    message: /too large/,
    shape: 'query',
  },
  {
    name: 'unterminated PQL',
    method: 'POST',
    url: '/index/i/query',
    body: 'Row(f=1',
    status: 400,
    message: /^parsing: .*line 1/,
    shape: 'query',
  },
  {
    name: 'PQL garbage',
    method: 'POST',
    url: '/index/i/query',
    body: 'Row(f=1))',
    status: 400,
    message: /^parsing: /,
    shape: 'query',
  },
  {
    name: 'unknown PQL call',
    method: 'POST',
    url: '/index/i/query',
    body: 'Foo(f=1)',
    status: 400,
    message: /unknown call: Foo/,
    shape: 'query',
  },
  {
    name: 'query on a missing index',
    method: 'POST',
    url: '/index/missing/query',
    body: 'Row(f=1)',
    status: 404,
    message: /index not found/,
    shape: 'query',
  },
  {
    name: 'Set on a missing field',
    method: 'POST',
    url: '/index/i/query',
    body: 'Set(9, nope=1)',
    status: 404,
    message: /field not found/,
    shape: 'query',
  },
  {
    name: 'int value above max',
    method: 'POST',
    url: '/index/i/query',
    body: 'Set(9, n=101)',
    status: 400,
    message: /too high|out of range|max/,
    shape: 'query',
  },
  {
    name: 'a bad write late in a batch applies nothing',
    method: 'POST',
    url: '/index/i/query',
    body: 'Set(7, f=1) Set(8, m=2) Set(9, n=-1000)',
    status: 400,
    message: /too low|out of range|min/,
    shape: 'query',
  },
  {
    name: 'bool field given an integer',
    method: 'POST',
    url: '/index/i/query',
    body: 'Set(9, b=5)',
    status: 400,
    message: /bool/,
    shape: 'query',
  },
  {
    name: 'string column on an index without keys',
    method: 'POST',
    url: '/index/i/query',
    body: 'Set("abc", f=1)',
    status: 400,
    message: /keys/,
    shape: 'query',
  },
  {
    name: 'integer column on an index with keys',
    method: 'POST',
    url: '/index/k/query',
    body: 'Set(1, f="a")',
    status: 400,
    message: /keys/,
    shape: 'query',
  },
  {
    name: 'unknown query argument',
    method: 'POST',
    url: '/index/i/query?bogus=1',
    body: 'Row(f=1)',
    status: 400,
    message: /bogus is not a valid argument/,
    shape: 'query',
  },
  {
    name: 'bad shards argument',
    method: 'POST',
    url: '/index/i/query?shards=a',
    body: 'Row(f=1)',
    status: 400,
    message: /invalid shard argument/,
    shape: 'query',
  },
  {
    name: 'corrupt protobuf query',
    method: 'POST',
    url: '/index/i/query',
    body: Buffer.from([0x0a, 0xff, 0xff, 0x01]),
    headers: { 'content-type': 'application/x-protobuf' },
    status: 400,
    message: /./,
    shape: 'query',
  },
  {
    name: 'negative row id',
    method: 'POST',
    url: '/index/i/query',
    body: 'Set(1, f=-1)',
    status: 400,
    message: /./,
    shape: 'query',
  },
];

describe('bad input', () => {
  it('has at least 25 cases', () => expect(cases.length).toBeGreaterThanOrEqual(25));

  for (const c of cases) {
    it(`${c.name} → ${c.status}`, async () => {
      const before = await stateFingerprint();
      const res = await req(c.method, c.url, c.body, c.headers);
      expect(res.status).toBe(c.status);
      const body = JSON.parse(res.body) as { error: string | { message: string }; success?: boolean };
      const message = c.shape === 'query' ? (body.error as string) : (body.error as { message: string }).message;
      if (c.shape === 'admin') expect(body.success).toBe(false);
      expect(typeof message).toBe('string');
      expect(message).toMatch(c.message);
      expect(await stateFingerprint()).toBe(before);
      expect((await req('GET', '/status')).status).toBe(200);
    });
  }
});
