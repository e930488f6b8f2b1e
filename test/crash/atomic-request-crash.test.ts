// SIGKILL between two durable batches while requests larger than the batch limit are in flight:
// after every restart each request is present in full or not at all. The server runs with the
// commit queue's test hooks: a batch limit of 500 records and a pause after each durable batch,
// so a request of thousands of records would span several batches if batches were cut inside it,
// and the kill lands in a pause between batches.
import { afterAll, describe, expect, it } from 'vitest';
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';
import { freePort, removeDir, spawnServer, tempDir, type ChildServer } from '../helpers/server.js';

// Read by the child (spawnServer passes this process's environment on).
process.env.BITLEDGER_TEST_MAX_BATCH_RECORDS = '500';
process.env.BITLEDGER_TEST_PAUSE_AFTER_BATCH_MS = '150';

const KILLS = 5;
const SETS = 2000; // Set() calls in one query: one record each, four times the batch limit
const HOURS = 1500; // hours spanned by one import into an hourly field: one record per view
const HOUR_NS = 3_600_000_000_000n;
const START_NS = BigInt(Date.parse('2020-01-01T00:00:00Z')) * 1_000_000n;
const dataDir = tempDir('bitledger-atomic-crash-');
let current: ChildServer | undefined;

afterAll(async () => {
  await current?.kill('SIGKILL');
  removeDir(dataDir);
});

const post = (url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(url, { method: 'POST', body, headers });

/** A query setting columns 0..SETS-1 in `row` of field f, one Set() call per column. */
function setQuery(row: number): string {
  return Array.from({ length: SETS }, (_, c) => `Set(${c}, f=${row})`).join('');
}

/** One import of `row` into field t: column h at hour h of 2020 and after, for HOURS hours. */
function hourlyImport(row: number): Buffer {
  const cols = Array.from({ length: HOURS }, (_, h) => h);
  const ts = cols.map((h) => START_NS + BigInt(h) * HOUR_NS);
  return Buffer.from(
    encodeImportRequest({
      index: 'c',
      field: 't',
      shard: 0,
      rowIds: new Array<number>(HOURS).fill(row),
      columnIds: cols,
      timestamps: ts,
    }),
  );
}

const hour = (h: number): string =>
  new Date(Number((START_NS + BigInt(h) * HOUR_NS) / 1_000_000n)).toISOString().slice(0, 16);

async function counts(url: string, query: string): Promise<number[]> {
  const r = await post(`${url}/index/c/query`, query);
  if (r.status !== 200) throw new Error(`query answered ${r.status}: ${await r.text()}`);
  return ((await r.json()) as { results: number[] }).results;
}

describe('SIGKILL between the batches of requests larger than the batch limit', () => {
  it('keeps each request whole or not at all', async () => {
    const port = await freePort();
    current = await spawnServer(dataDir, port);
    expect((await post(`${current.url}/index/c`, '')).status).toBe(200);
    expect((await post(`${current.url}/index/c/field/f`, '')).status).toBe(200);
    expect(
      (await post(`${current.url}/index/c/field/t`, '{"options":{"type":"time","timeQuantum":"YMDH"}}')).status,
    ).toBe(200);
    const sentSets = new Set<number>();
    const sentImports = new Set<number>();
    const acked = new Set<number>();
    let nextRow = 1;
    for (let round = 0; round < KILLS; round++) {
      const server = current;
      let stop = false;
      const client = async (kind: 'set' | 'import'): Promise<void> => {
        while (!stop) {
          const row = nextRow++;
          (kind === 'set' ? sentSets : sentImports).add(row);
          try {
            const r =
              kind === 'set'
                ? await post(`${server.url}/index/c/query`, setQuery(row))
                : await post(`${server.url}/index/c/field/t/import`, hourlyImport(row), {
                    'content-type': 'application/x-protobuf',
                    accept: 'application/x-protobuf',
                  });
            if (r.status !== 200) throw new Error(`${kind} answered ${r.status}: ${await r.text()}`);
            acked.add(row);
          } catch (err) {
            if (err instanceof Error && err.message.includes(' answered ')) throw err;
            return; // connection refused or reset: the server is gone
          }
        }
      };
      const clients = [client('set'), client('set'), client('set'), client('import'), client('import')];
      // Kill once this round has acknowledged something (so the run proves progress even on a
      // loaded machine), at a random moment after: most of the time is spent in the pauses.
      const ackedBefore = acked.size;
      for (let waited = 0; acked.size === ackedBefore && waited < 20_000; waited += 50)
        await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, Math.random() * 600));
      await server.kill('SIGKILL');
      stop = true;
      await Promise.all(clients);

      current = await spawnServer(dataDir, port);
      const setRows = [...sentSets];
      const setCounts = await counts(current.url, setRows.map((row) => `Count(Row(f=${row}))`).join(''));
      setRows.forEach((row, i) => {
        if (acked.has(row) && setCounts[i] !== SETS)
          throw new Error(`round ${round}: acknowledged query of row ${row} has ${setCounts[i]} of ${SETS} Sets`);
        expect(setCounts[i], `round ${round}: query of row ${row} is partly applied`).toBeOneOf([0, SETS]);
      });
      for (const row of sentImports) {
        // standard, the first hour's view and the last hour's view: all or nothing across views.
        const q = `Count(Row(t=${row}))Count(Row(t=${row}, from=${hour(0)}, to=${hour(1)}))Count(Row(t=${row}, from=${hour(HOURS - 1)}, to=${hour(HOURS)}))`;
        const got = await counts(current.url, q);
        if (acked.has(row)) expect(got, `round ${round}: acknowledged import of row ${row}`).toEqual([HOURS, 1, 1]);
        else if (got[0] !== 0 || got[1] !== 0 || got[2] !== 0)
          expect(got, `round ${round}: import of row ${row} is partly applied`).toEqual([HOURS, 1, 1]);
      }
    }
    expect(acked.size).toBeGreaterThanOrEqual(KILLS); // every round acknowledged something before its kill
  }, 240_000);
});
