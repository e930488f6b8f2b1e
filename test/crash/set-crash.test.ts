// Crash test: a real server process receives Set() calls from concurrent clients and is
// SIGKILLed at random moments, 20+ times. After every restart each acknowledged write is present.
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, removeDir, spawnServer, tempDir, type ChildServer } from '../helpers/server.js';
import { unlessServerGone } from '../helpers/server-gone.js';
import { until } from '../helpers/until.js';

const KILLS = 20;
const CLIENTS = 8;
/** Writes each round acknowledges before its kill (so the rounds together exceed KILLS · 10). */
const MIN_ACKED_PER_ROUND = 15;
const dataDir = tempDir('bitledger-crash-');
let current: ChildServer | undefined;

afterAll(async () => {
  await current?.kill('SIGKILL');
  removeDir(dataDir);
});

async function post(url: string, body: string): Promise<Response> {
  return fetch(url, { method: 'POST', body });
}

describe('SIGKILL during concurrent Set()', () => {
  it(`keeps every acknowledged write across ${KILLS} kills`, async () => {
    const port = await freePort();
    current = await spawnServer(dataDir, port, ['--snapshot-every-events', '500']);
    expect((await post(`${current.url}/index/c`, '')).status).toBe(200);
    expect((await post(`${current.url}/index/c/field/f`, '')).status).toBe(200);
    const acked = new Map<number, number>(); // column → row
    let nextCol = 0;
    for (let round = 0; round < KILLS; round++) {
      const server = current;
      let stop = false;
      const client = async (): Promise<void> => {
        while (!stop) {
          const col = nextCol++;
          const row = col % 7;
          // A wrong status or body fails the test; only a dead connection ends the client.
          const alive = await unlessServerGone(async () => {
            const r = await post(`${server.url}/index/c/query`, `Set(${col * 37}, f=${row})`);
            const text = await r.text();
            if (r.status !== 200) throw new Error(`Set(${col * 37}, f=${row}) answered ${r.status}: ${text}`);
            expect((JSON.parse(text) as { results: boolean[] }).results).toEqual([true]);
            acked.set(col * 37, row);
          });
          if (!alive) return;
        }
      };
      const ackedBefore = acked.size;
      const clients = Array.from({ length: CLIENTS }, client);
      // Kill once this round has acknowledged some writes (a condition, so a loaded machine still
      // kills mid-stream), then after a random extra moment.
      await until(() => acked.size >= ackedBefore + MIN_ACKED_PER_ROUND, { what: 'acknowledged writes this round' });
      await new Promise((r) => setTimeout(r, Math.random() * 250));
      await server.kill('SIGKILL');
      stop = true;
      await Promise.all(clients);

      current = await spawnServer(dataDir, port, ['--snapshot-every-events', '500']);
      const rows = await post(`${current.url}/index/c/query`, [0, 1, 2, 3, 4, 5, 6].map((r) => `Row(f=${r})`).join(''));
      expect(rows.status).toBe(200);
      const got = ((await rows.json()) as { results: { columns: number[] }[] }).results.map((r) => new Set(r.columns));
      for (const [col, row] of acked) {
        if (!got[row].has(col))
          throw new Error(`round ${round}: acknowledged Set(${col}, f=${row}) lost after SIGKILL`);
      }
    }
    expect(acked.size).toBeGreaterThan(KILLS * 10);
  }, 240_000);
});
