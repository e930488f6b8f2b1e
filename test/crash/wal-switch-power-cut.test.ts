// A power cut across a LevelDB WAL switch. When its 4 MiB memtable fills, LevelDB closes the old
// WAL (NNNNNN.log) without an fsync and writes on in a new one; until the memtable's table file
// is written, the old WAL is the only copy of its writes. A sync of the new WAL in that window
// (here the `--fsync interval` timer's) does not make them durable: without the event log's
// fsync of every WAL file first (src/storage/leveldb-wal-sync.ts) a power cut takes imports
// acknowledged before that sync (on main: the old WAL's last import), or, with newer records
// synced in the new WAL, leaves a hole that the restart refuses.
// A real server with the sync-ledger shim takes large unsynced imports. The cut comes exactly in
// the window: the server is frozen (SIGSTOP) and killed only if, frozen, an older WAL still
// exists with bytes that LevelDB's own syncs left unsynced and the newest WAL was synced since.
// The shim holds each table file's sync for TABLE_SYNC_MS, so every switch keeps its old WAL that
// long: left to itself LevelDB wrote the table within one interval often enough that a CI run
// polled for 60 s without finding the window once.
import { describe, expect, it } from 'vitest';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';
import { cutPower, fileKey, readLedger } from '../helpers/power-cut.js';
import { durableSchema, powerCutSuite } from '../helpers/power-cut-suite.js';
import { countRows, post } from '../helpers/row-imports.js';
import { unlessServerGone } from '../helpers/server-gone.js';
import { until } from '../helpers/until.js';

/** Columns per import: ~31 kB of log each (measured), so a memtable switch every ~130 imports. */
const BITS = 200_000;
const CLIENTS = 2;
/** How long the shim holds a LevelDB table's sync (SYNC_LEDGER_SLOW_TABLE_MS): 15 of the 20 ms intervals. */
const TABLE_SYNC_MS = 300;

const suite = powerCutSuite('bitledger-walswitch-');

/** Row `row` set at columns 0..BITS-1: its count tells whether the import survived whole. */
function rowImport(row: number): Buffer {
  const columnIds = Array.from({ length: BITS }, (_, i) => i);
  return Buffer.from(
    encodeImportRequest({ index: 'c', field: 'f', shard: 0, rowIds: new Array<number>(BITS).fill(row), columnIds }),
  );
}

interface Window {
  /** Bytes of the older WAL that LevelDB's own syncs left unsynced. */
  unsyncedByLevelDb: number;
  /** When the last sync of the newest WAL began. */
  newestSyncMs: number;
}

/**
 * The window, if the data directory is in it: an older WAL still exists with bytes LevelDB's own
 * (writable-descriptor) syncs did not cover, and the newest WAL has been synced by LevelDB since
 * it was opened (which came after the older one was closed).
 */
function inWindow(levelDbDir: string, ledger: string): Window | undefined {
  const wals = readdirSync(levelDbDir)
    .filter((n) => /^\d+\.log$/.test(n))
    .sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
  if (wals.length < 2) return undefined;
  const { syncs, syncedByWriters } = readLedger(ledger);
  try {
    const newest = fileKey(join(levelDbDir, wals[wals.length - 1]));
    const newestSyncs = syncs.filter((s) => s.file === newest && !s.readOnly);
    if (newestSyncs.length === 0) return undefined;
    let unsyncedByLevelDb = 0;
    for (const name of wals.slice(0, -1)) {
      const path = join(levelDbDir, name);
      unsyncedByLevelDb += statSync(path).size - (syncedByWriters.get(fileKey(path)) ?? 0);
    }
    if (unsyncedByLevelDb <= 0) return undefined;
    return { unsyncedByLevelDb, newestSyncMs: Math.max(...newestSyncs.map((s) => s.beganMs)) };
  } catch (err) {
    // A WAL deleted between the listing and the stat: its table is written, the window closed.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

describe('simulated power cut across a LevelDB WAL switch', () => {
  it('--fsync interval: a sync after the switch makes the old WAL durable too; the restart has every synced import', async () => {
    const node = await suite.node('interval', ['--fsync', 'interval', '--fsync-interval-ms', '20'], {
      SYNC_LEDGER_SLOW_TABLE_MS: String(TABLE_SYNC_MS),
    });
    const { dataDir, ledger, start } = node;
    const levelDbDir = join(dataDir, 'leveldb');
    await durableSchema(node);
    let server = await start();

    const acked: { row: number; atMs: number }[] = [];
    let nextRow = 1;
    let stop = false;
    const target = server;
    const client = async (): Promise<void> => {
      while (!stop) {
        const row = nextRow++;
        const alive = await unlessServerGone(async () => {
          const res = await post(`${target.url}/index/c/field/f/import`, rowImport(row), {
            'content-type': 'application/x-protobuf',
          });
          const text = await res.text();
          if (res.status !== 200) throw new Error(`import of row ${row} answered ${res.status}: ${text}`);
          acked.push({ row, atMs: Date.now() });
        });
        if (!alive) return;
      }
    };
    const clients = Array.from({ length: CLIENTS }, client);

    // Polled while running; confirmed frozen, so nothing (a table written, the old WAL deleted)
    // can close the window between the check and the kill.
    let window: Window | undefined;
    const pid = server.proc.pid ?? 0;
    await until(
      () => {
        if (inWindow(levelDbDir, ledger) === undefined) return false;
        process.kill(pid, 'SIGSTOP');
        window = inWindow(levelDbDir, ledger);
        if (window === undefined) process.kill(pid, 'SIGCONT');
        return window !== undefined;
      },
      { what: 'a sync of a new LevelDB WAL while the old one holds writes LevelDB left unsynced', stepMs: 2 },
    );
    await server.kill('SIGKILL');
    stop = true;
    await Promise.all(clients);

    // The precondition: LevelDB alone left the old WAL's tail unsynced behind a synced newer WAL.
    expect(window?.unsyncedByLevelDb).toBeGreaterThan(0);
    const syncedMs = window?.newestSyncMs ?? 0;
    const cut = cutPower(dataDir, ledger);
    // Acknowledged before the last sync began: handed to LevelDB before it, so durable.
    const durable = acked.filter((a) => a.atMs < syncedMs).map((a) => a.row);
    expect(durable.length, 'no import was acknowledged before the sync').toBeGreaterThan(0);

    // Without the fix the restart refuses: records are missing from the log (spawnServer throws).
    server = await start();
    const { status, counts } = await countRows(server.url, durable);
    expect(status).toBe(200);
    const short = durable.filter((_, i) => counts[i] !== BITS);
    expect(short, 'imports acknowledged before the sync, not whole after the cut').toEqual([]);
    console.log(
      `WAL switch power cut: ${acked.length} imports acknowledged, ${durable.length} before the sync, ` +
        `${window?.unsyncedByLevelDb} old-WAL bytes left unsynced by LevelDB, ${cut.bytesDropped} bytes cut`,
    );
    await server.kill('SIGKILL');
  }, 180_000);
});
