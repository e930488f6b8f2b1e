// Power-cut tests for --fsync: a real server process, with the sync-ledger shim preloaded,
// takes concurrent Set() calls and is SIGKILLed; then every file of its data directory is cut
// back to what its last fsync made durable (test/helpers/power-cut.ts), and it restarts.
//   always:   no acknowledged write is ever lost (snapshots and log release included);
//   interval: only writes acknowledged after the log's last periodic sync can be lost;
//   never:    acknowledged writes are lost (which also proves the cut really drops data).
import { describe, expect, it } from 'vitest';
import { cutPower, fileKey, readLedger } from '../helpers/power-cut.js';
import { durableSchema, powerCutSuite } from '../helpers/power-cut-suite.js';
import { unlessServerGone } from '../helpers/server-gone.js';
import { until } from '../helpers/until.js';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const ROUNDS = 3;
const CLIENTS = 6;
const ROWS = 7;
/** A round is cut only after this many acknowledged writes (each round checks it has more than 5). */
const MIN_ACKED = 8;

const suite = powerCutSuite('bitledger-powercut-');

interface Ack {
  col: number;
  atMs: number;
}

interface Round {
  acked: Ack[];
  lost: Ack[];
  /** Start of the last sync of a LevelDB log file during the round (undefined: none). */
  lastLogSyncMs: number | undefined;
  bytesDropped: number;
  logBytesDropped: number;
}

async function post(url: string, body: string): Promise<Response> {
  return fetch(url, { method: 'POST', body });
}

/** Runs ROUNDS rounds of load → SIGKILL → power cut → restart under one fsync policy. */
async function powerCutRounds(name: string, args: string[]): Promise<Round[]> {
  const node = await suite.node(name, args);
  const { dataDir, ledger, start } = node;
  await durableSchema(node);

  const rounds: Round[] = [];
  const survivors = new Set<number>();
  let nextCol = 0;
  for (let r = 0; r < ROUNDS; r++) {
    let server = await start();
    const roundStart = Date.now();
    const acked: Ack[] = [];
    let stop = false;
    const target = server;
    const client = async (): Promise<void> => {
      while (!stop) {
        const col = nextCol++;
        const alive = await unlessServerGone(async () => {
          const res = await post(`${target.url}/index/c/query`, `Set(${col}, f=${col % ROWS})`);
          const text = await res.text();
          if (res.status !== 200) throw new Error(`Set(${col}) answered ${res.status}: ${text}`);
          expect((JSON.parse(text) as { results: boolean[] }).results).toEqual([true]);
          acked.push({ col, atMs: Date.now() });
        });
        if (!alive) return;
      }
    };
    const clients = Array.from({ length: CLIENTS }, client);
    // Cut once the round has acknowledged writes to lose (a loaded machine may take longer than
    // any fixed wait to answer the first), then at a random point of the writes that follow.
    await until(() => acked.length >= MIN_ACKED, { what: `${MIN_ACKED} acknowledged Set()s` });
    // And, where the policy syncs, once the log was synced in this round (each ack under `always`,
    // the first period under `interval`): on a loaded machine the cut could otherwise come before
    // the first period ended, and the checks need a sync to judge what it covered.
    if (name !== 'never')
      await until(() => logSyncedSince(dataDir, ledger, roundStart), { what: 'a sync of the log in this round' });
    await new Promise((res) => setTimeout(res, Math.random() * 400));
    await server.kill('SIGKILL');
    stop = true;
    await Promise.all(clients);

    const logFiles = new Map<string, string>();
    for (const f of readdirSync(join(dataDir, 'leveldb')))
      if (f.endsWith('.log')) logFiles.set(fileKey(join(dataDir, 'leveldb', f)), f);
    const logSyncs = readLedger(ledger).syncs.filter((s) => s.beganMs >= roundStart && logFiles.has(s.file));
    const lastLogSyncMs = logSyncs.length > 0 ? Math.max(...logSyncs.map((s) => s.beganMs)) : undefined;
    const cut = cutPower(dataDir, ledger);
    const logBytesDropped = [...cut.cut].filter(([path]) => path.endsWith('.log')).reduce((n, [, b]) => n + b, 0);

    server = await start();
    const res = await post(
      `${server.url}/index/c/query`,
      Array.from({ length: ROWS }, (_, i) => `Row(f=${i})`).join(''),
    );
    expect(res.status).toBe(200);
    const present = new Set(
      ((await res.json()) as { results: { columns: number[] }[] }).results.flatMap((x) => x.columns),
    );
    // What survived an earlier cut was made durable by the reopen: it must still be there.
    for (const col of survivors)
      if (!present.has(col))
        throw new Error(`${name} round ${r}: column ${col}, present after an earlier power cut, vanished`);
    const lost = acked.filter((a) => !present.has(a.col));
    for (const a of acked) if (present.has(a.col)) survivors.add(a.col);
    rounds.push({ acked, lost, lastLogSyncMs, bytesDropped: cut.bytesDropped, logBytesDropped });
    await server.kill('SIGKILL');
  }
  const sum = (f: (x: Round) => number): number => rounds.reduce((n, x) => n + f(x), 0);
  console.log(
    `power cut, ${name}: ${ROUNDS} rounds, ${sum((x) => x.acked.length)} acknowledged Set()s, ${sum((x) => x.lost.length)} lost, ${sum((x) => x.logBytesDropped)} log bytes dropped`,
  );
  return rounds;
}

/** Whether the shim saw a sync of one of LevelDB's current log files begin at or after `since`. */
function logSyncedSince(dataDir: string, ledger: string, since: number): boolean {
  const logs = new Set<string>();
  for (const f of readdirSync(join(dataDir, 'leveldb')))
    if (f.endsWith('.log'))
      try {
        logs.add(fileKey(join(dataDir, 'leveldb', f)));
      } catch {
        // Rotated away between the listing and the stat: not a current log file.
      }
  return readLedger(ledger).syncs.some((s) => s.beganMs >= since && logs.has(s.file));
}

describe('simulated power cut after SIGKILL', () => {
  it('--fsync always: no acknowledged write is lost, across snapshots and log release', async () => {
    const rounds = await powerCutRounds('always', ['--fsync', 'always', '--snapshot-every-events', '10']);
    for (const [r, round] of rounds.entries()) {
      expect(round.acked.length, `round ${r} acknowledged nothing`).toBeGreaterThan(5);
      expect(round.lastLogSyncMs, `round ${r}: the shim saw no log sync`).toBeDefined();
      expect(
        round.lost.map((a) => a.col),
        `round ${r}`,
      ).toEqual([]);
    }
    // Snapshots were written (and survived the cuts: they are synced before they are published).
    const snaps = readdirSync(join(suite.workDir(), 'always', 'snapshots')).filter((f) => f.endsWith('.snap'));
    expect(snaps.length).toBeGreaterThan(0);
  }, 120_000);

  it('--fsync interval: only writes acknowledged after the last periodic sync are lost', async () => {
    const rounds = await powerCutRounds('interval', ['--fsync', 'interval', '--fsync-interval-ms', '100']);
    for (const [r, round] of rounds.entries()) {
      expect(round.acked.length, `round ${r} acknowledged nothing`).toBeGreaterThan(5);
      const lastSync = round.lastLogSyncMs;
      expect(lastSync, `round ${r}: no periodic sync of the log`).toBeDefined();
      // Acknowledged before the sync began = handed to the OS before it: durable.
      const early = round.lost.filter((a) => a.atMs < (lastSync ?? 0));
      expect(
        early.map((a) => a.col),
        `round ${r}: lost though acknowledged before the last sync`,
      ).toEqual([]);
    }
  }, 120_000);

  it('--fsync never: acknowledged writes are lost (the cut drops unsynced data)', async () => {
    const rounds = await powerCutRounds('never', ['--fsync', 'never']);
    for (const [r, round] of rounds.entries()) {
      expect(round.acked.length, `round ${r} acknowledged nothing`).toBeGreaterThan(5);
      // Nothing syncs the log in this mode: the cut takes the round's writes from it.
      expect(round.logBytesDropped, `round ${r}`).toBeGreaterThan(0);
      expect(round.lost.length, `round ${r}: nothing lost, so the cut proves nothing`).toBeGreaterThan(0);
    }
  }, 120_000);
});
