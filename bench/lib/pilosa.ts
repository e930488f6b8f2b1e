// The Pilosa HTTP calls the benches make, over the keep-alive client.
import { encodeImportRoaringRequest } from '../../src/encoding/public-proto.js';
import { RoaringBitmap32 } from '../../src/roaring/bitmap.js';
import { encodePilosaRoaring } from '../../src/roaring/pilosa-roaring.js';
import type { HttpClient } from './http-client.js';

export async function createIndex(
  c: HttpClient,
  index: string,
  options: { trackExistence?: boolean } = {},
): Promise<void> {
  await c.ok('POST', `/index/${index}`, JSON.stringify({ options }));
}

export async function createField(
  c: HttpClient,
  index: string,
  field: string,
  options: Record<string, unknown> = {},
): Promise<void> {
  await c.ok('POST', `/index/${index}/field/${field}`, JSON.stringify({ options }));
}

export interface QueryJson {
  results: unknown[];
}

export async function query(c: HttpClient, index: string, pql: string): Promise<QueryJson> {
  const body = await c.ok('POST', `/index/${index}/query`, pql, 'text/plain');
  return JSON.parse(body.toString('utf8')) as QueryJson;
}

export async function importProtobuf(c: HttpClient, index: string, field: string, body: Uint8Array): Promise<void> {
  await c.ok('POST', `/index/${index}/field/${field}/import`, body, 'application/x-protobuf');
}

export async function importRoaring(
  c: HttpClient,
  index: string,
  field: string,
  shard: number,
  body: Uint8Array,
): Promise<void> {
  await c.ok('POST', `/index/${index}/field/${field}/import-roaring/${shard}`, body, 'application/x-protobuf');
}

/** Index `index` and set field `field` whose row 1 holds every column of shards 0..shards-1. */
export async function loadFullRow(c: HttpClient, index: string, field: string, shards: number): Promise<void> {
  await createIndex(c, index);
  await createField(c, index, field);
  const all = new RoaringBitmap32();
  all.addRange(0, 1 << 20);
  const body = encodeImportRoaringRequest({
    clear: false,
    views: [{ name: '', data: encodePilosaRoaring(new Map([[1, all]])) }],
  });
  for (let s = 0; s < shards; s++) await importRoaring(c, index, field, s, body);
}

/** The server's bitledger_heap_trims_total (its returns of freed memory after bulk writes). */
export async function heapTrims(c: HttpClient): Promise<number> {
  const text = (await c.ok('GET', '/metrics')).toString();
  return Number(/^bitledger_heap_trims_total (\d+)/m.exec(text)?.[1] ?? NaN);
}
