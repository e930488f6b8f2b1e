// Legacy (0.5–0.10) bulk import routes: POST /import (frame and slice in the body) and
// POST /import-value (the frame's int field as field 4), as 0.x client libraries send them.
import { afterEach, describe, expect, it } from 'vitest';
import { encodeImportRequest, encodeImportValueRequest } from '../../src/encoding/import-request-encode.js';
import { startServer, type TestServer, stopServer } from '../helpers/server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await stopServer(server);
  server = undefined;
});

const PROTO = { 'content-type': 'application/x-protobuf', accept: 'application/x-protobuf' };

async function post(url: string, body: Uint8Array | string, headers: Record<string, string> = PROTO) {
  const res = await server!.app.inject({
    method: 'POST',
    url,
    payload: typeof body === 'string' ? body : Buffer.from(body),
    headers,
  });
  return { status: res.statusCode, raw: res.body };
}

const results = async (q: string): Promise<unknown> => JSON.parse((await post('/index/i/query', q, {})).raw) as unknown;

/** A 0.x ImportValueRequest: the 1.x message plus Field = 4, the frame's int field. */
function legacyValueRequest(
  frame: string,
  field: string,
  slice: number,
  columnIds: number[],
  values: bigint[],
): Uint8Array {
  const base = encodeImportValueRequest({ index: 'i', field: frame, shard: slice, columnIds, values });
  const name = Buffer.from(field);
  return Buffer.concat([base, Buffer.from([(4 << 3) | 2, name.length]), name]);
}

describe('legacy import', () => {
  it('imports bits into a frame by slice', async () => {
    server = await startServer();
    await post('/index/i', '', {});
    await post('/index/i/frame/f', '', {});
    const body = encodeImportRequest({
      index: 'i',
      field: 'f',
      shard: 1,
      rowIds: [1, 1, 2],
      columnIds: [1048577, 1048580, 1048577],
    });
    expect(await post('/import', body)).toEqual({ status: 200, raw: '' });
    expect(await results('Bitmap(frame=f, row=1) Bitmap(frame=f, row=2)')).toEqual({
      results: [
        { attrs: {}, bits: [1048577, 1048580] },
        { attrs: {}, bits: [1048577] },
      ],
    });

    // Timestamps (ns) reach a time frame's views.
    await post('/index/i/frame/t', JSON.stringify({ options: { timeQuantum: 'YM' } }), {});
    const ts = BigInt(Date.UTC(2018, 4, 2)) * 1_000_000n;
    expect(
      (
        await post(
          '/import',
          encodeImportRequest({ index: 'i', field: 't', shard: 0, rowIds: [3], columnIds: [9], timestamps: [ts] }),
        )
      ).status,
    ).toBe(200);
    expect(await results('Count(Range(frame=t, row=3, start="2018-05-01T00:00", end="2018-06-01T00:00"))')).toEqual({
      results: [1],
    });
  });

  it('imports int values into a frame field', async () => {
    server = await startServer();
    await post('/index/i', '', {});
    await post(
      '/index/i/frame/f',
      JSON.stringify({ options: { fields: [{ name: 'x', type: 'int', min: 0, max: 100 }] } }),
      {},
    );
    expect(await post('/import-value', legacyValueRequest('f', 'x', 0, [1, 2, 3], [5n, 50n, 60n]))).toEqual({
      status: 200,
      raw: '',
    });
    expect(await results('Count(Range(frame=f, x > 10))')).toEqual({ results: [2] });
    expect((await post('/import-value', legacyValueRequest('f', 'x', 0, [1], [500n]))).status).toBe(400);
    expect((await post('/import-value', legacyValueRequest('f', 'nope', 0, [1], [5n]))).status).toBe(404);
  });

  it('refuses requests that are not protobuf or name no frame', async () => {
    server = await startServer();
    await post('/index/i', '', {});
    await post('/index/i/frame/f', '', {});
    const body = encodeImportRequest({ index: 'i', field: 'f', shard: 0, rowIds: [1], columnIds: [1] });
    expect((await post('/import', body, { 'content-type': 'application/json' })).status).toBe(415);
    expect(
      (await post('/import', body, { 'content-type': 'application/x-protobuf', accept: 'application/json' })).status,
    ).toBe(406);
    expect(
      (await post('/import', encodeImportRequest({ index: 'i', field: '', rowIds: [1], columnIds: [1] }))).status,
    ).toBe(400);
    expect(
      (await post('/import', encodeImportRequest({ index: 'i', field: 'nope', rowIds: [1], columnIds: [1] }))).status,
    ).toBe(404);
    // Columns outside the named slice are refused (0.x clients group bits by slice).
    expect(
      (await post('/import', encodeImportRequest({ index: 'i', field: 'f', shard: 1, rowIds: [1], columnIds: [1] })))
        .status,
    ).toBe(400);
  });
});
