// Imports of one row of random columns of shard 0 into index c, field f, for the disk tests
// (about 80 kB of log each at 40,000 bits), and the counts of rows read back.
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';

export const ROW_BITS = 40_000;

export function importBody(row: number, bits = ROW_BITS): Buffer {
  const cols = Array.from({ length: bits }, () => Math.floor(Math.random() * 1_048_576));
  return Buffer.from(
    encodeImportRequest({
      index: 'c',
      field: 'f',
      shard: 0,
      rowIds: new Array<number>(bits).fill(row),
      columnIds: cols,
    }),
  );
}

export const post = (url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(url, { method: 'POST', body, headers });

export const importRow = (url: string, row: number): Promise<Response> =>
  post(`${url}/index/c/field/f/import`, importBody(row), { 'content-type': 'application/x-protobuf' });

/** Count(Row(f=row)) of each row in one query; the status when it is not 200. */
export async function countRows(url: string, rows: number[]): Promise<{ status: number; counts: number[] }> {
  const r = await post(`${url}/index/c/query`, rows.map((row) => `Count(Row(f=${row}))`).join('') || 'Count(Row(f=0))');
  if (r.status !== 200) return { status: r.status, counts: [] };
  return { status: 200, counts: ((await r.json()) as { results: number[] }).results };
}
