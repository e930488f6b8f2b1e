// The floor for the HTTP bench (issue 24): a bare fastify server answering the bench's Count
// from the same roaring bitmaps, with no PQL parsing, durability, metrics, logging or security,
// in its own process like the server under test. Run as
// `node dist/bench/lib/floor-server.js PORT DATAFILE`; DATAFILE holds, per shard, rows 1 and 2
// of field f as portable roaring (writeFloorData). Prints "listening" when it answers.
// POST /empty/... answers without the intersections (the request path alone).
import { readFileSync, writeFileSync } from 'node:fs';
import Fastify from 'fastify';
import { type Bitmap, RoaringBitmap32 } from '../../src/roaring/bitmap.js';

/** Pairs of bitmaps (one pair a shard), each as u32 LE length + portable bytes. */
export function writeFloorData(path: string, pairs: readonly [Bitmap, Bitmap][]): void {
  const parts: Buffer[] = [];
  for (const pair of pairs)
    for (const bm of pair) {
      const bytes = bm.serialize('portable');
      const len = Buffer.alloc(4);
      len.writeUInt32LE(bytes.length);
      parts.push(len, Buffer.from(bytes));
    }
  writeFileSync(path, Buffer.concat(parts));
}

function readFloorData(path: string): [Bitmap, Bitmap][] {
  const buf = readFileSync(path);
  const bitmaps: Bitmap[] = [];
  for (let at = 0; at < buf.length; ) {
    const len = buf.readUInt32LE(at);
    bitmaps.push(RoaringBitmap32.deserialize(buf.subarray(at + 4, at + 4 + len), 'portable'));
    at += 4 + len;
  }
  const pairs: [Bitmap, Bitmap][] = [];
  for (let i = 0; i + 1 < bitmaps.length; i += 2) pairs.push([bitmaps[i], bitmaps[i + 1]]);
  return pairs;
}

async function main(): Promise<void> {
  const [port, file] = process.argv.slice(2);
  const pairs = readFloorData(file);
  const app = Fastify({ logger: false });
  app.post('/index/:index/query', async (_req, reply) => {
    let n = 0;
    for (const [a, b] of pairs) n += a.andCardinality(b);
    return reply.type('application/json').send(`{"results":[${n}]}`);
  });
  // The same answer's shape without the intersections: what the floor's request path costs alone.
  app.post('/empty/:index/query', async (_req, reply) => reply.type('application/json').send('{"results":[0]}'));
  await app.listen({ host: '127.0.0.1', port: Number(port) });
  console.log('listening');
}

if (process.argv[1]?.endsWith('floor-server.js')) await main();
