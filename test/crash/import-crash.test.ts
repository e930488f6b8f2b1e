// SIGKILL during a stream of concurrent imports: after restart every acknowledged import is
// present in full and no unacknowledged one is present in part (one request = one atomic group).
import { afterAll, describe, expect, it } from 'vitest';
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';
import { freePort, removeDir, spawnServer, tempDir, type ChildServer } from '../helpers/server.js';
import { unlessServerGone } from '../helpers/server-gone.js';

const KILLS = 6;
const BITS = 5000; // per request, all in the request's own row
const dataDir = tempDir('bitledger-import-crash-');
let current: ChildServer | undefined;

afterAll(async () => {
  await current?.kill('SIGKILL');
  removeDir(dataDir);
});

function request(row: number): Buffer {
  const cols = Array.from({ length: BITS }, (_, i) => i * 97 + (row % 97));
  return Buffer.from(
    encodeImportRequest({
      index: 'c',
      field: 'f',
      shard: 0,
      rowIds: new Array<number>(BITS).fill(row),
      columnIds: cols,
    }),
  );
}

describe('SIGKILL during concurrent imports', () => {
  it('never loses an acknowledged import and never keeps part of one', async () => {
    const port = await freePort();
    current = await spawnServer(dataDir, port);
    expect((await fetch(`${current.url}/index/c`, { method: 'POST' })).status).toBe(200);
    expect((await fetch(`${current.url}/index/c/field/f`, { method: 'POST' })).status).toBe(200);
    const acked = new Set<number>();
    const sent = new Set<number>();
    let nextRow = 1;
    for (let round = 0; round < KILLS; round++) {
      const server = current;
      let stop = false;
      const client = async (): Promise<void> => {
        while (!stop) {
          const row = nextRow++;
          sent.add(row);
          const alive = await unlessServerGone(async () => {
            const r = await fetch(`${server.url}/index/c/field/f/import`, {
              method: 'POST',
              body: request(row),
              headers: { 'content-type': 'application/x-protobuf', accept: 'application/x-protobuf' },
            });
            const body = await r.arrayBuffer();
            if (r.status !== 200) throw new Error(`import answered ${r.status}: ${Buffer.from(body).toString()}`);
            acked.add(row);
          });
          if (!alive) return;
        }
      };
      const clients = Array.from({ length: 4 }, client);
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 400));
      await server.kill('SIGKILL');
      stop = true;
      await Promise.all(clients);
      current = await spawnServer(dataDir, port);
      const rows = [...sent];
      const counts: number[] = [];
      for (let i = 0; i < rows.length; i += 200) {
        const r = await fetch(`${current.url}/index/c/query`, {
          method: 'POST',
          body: rows
            .slice(i, i + 200)
            .map((row) => `Count(Row(f=${row}))`)
            .join(''),
        });
        counts.push(...((await r.json()) as { results: number[] }).results);
      }
      rows.forEach((row, i) => {
        if (acked.has(row) && counts[i] !== BITS)
          throw new Error(`round ${round}: acknowledged import of row ${row} has ${counts[i]} of ${BITS} bits`);
        if (counts[i] !== 0 && counts[i] !== BITS)
          throw new Error(`round ${round}: import of row ${row} is partly applied (${counts[i]} bits)`);
      });
    }
    expect(acked.size).toBeGreaterThan(KILLS);
  }, 180_000);
});
