// A simulated power cut for a SIGKILLed server: every file under the data directory is cut back
// to what was durable at its last fsync/fdatasync, as recorded by the sync-ledger shim
// (power-cut/sync-ledger.c, LD_PRELOADed into the server). Without this, a SIGKILL keeps all
// written data in the page cache and no --fsync policy could ever be seen to lose anything.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SHIM_SOURCE = fileURLToPath(new URL('./power-cut/sync-ledger.c', import.meta.url));

/** Compiles the shim with the machine's C compiler into `outDir`; returns the .so path. */
export function buildSyncLedgerShim(outDir: string): string {
  const out = join(outDir, 'sync-ledger.so');
  const cc = process.env.CC ?? 'cc';
  execFileSync(cc, ['-shared', '-fPIC', '-O2', '-Wall', '-o', out, SHIM_SOURCE, '-ldl'], { stdio: 'pipe' });
  return out;
}

/** Environment for a server whose syncs under `dataDir` are recorded in `ledgerFile`. */
export function syncLedgerEnv(shim: string, ledgerFile: string, dataDir: string): NodeJS.ProcessEnv {
  // libuv's io_uring file I/O would bypass libc (and the shim): keep it on the thread pool.
  return { LD_PRELOAD: shim, SYNC_LEDGER_FILE: ledgerFile, SYNC_LEDGER_DIR: dataDir, UV_USE_IO_URING: '0' };
}

export interface SyncRecord {
  /** dev:ino of the file. */
  file: string;
  bytes: number;
  /** Wall-clock ms when the sync began: everything written before it is durable. */
  beganMs: number;
  /** Through a read-only descriptor (the event log's fsync of LevelDB's WAL files by path). */
  readOnly: boolean;
}

/**
 * The ledger's sync records in order, and each file's synced length now (drops applied); and
 * `syncedByWriters`, the same counting only syncs through writable descriptors: what LevelDB's
 * own syncs made durable, without the event log's fsyncs of its WAL files by path.
 */
export function readLedger(ledgerFile: string): {
  syncs: SyncRecord[];
  synced: Map<string, number>;
  syncedByWriters: Map<string, number>;
} {
  const syncs: SyncRecord[] = [];
  const synced = new Map<string, number>();
  const syncedByWriters = new Map<string, number>();
  const text = existsSync(ledgerFile) ? readFileSync(ledgerFile, 'utf8') : '';
  for (const line of text.split('\n')) {
    const [kind, dev, ino, bytes, began, by] = line.split(' ');
    if (kind === 'S') {
      const rec = { file: `${dev}:${ino}`, bytes: Number(bytes), beganMs: Number(began), readOnly: by === 'r' };
      syncs.push(rec);
      synced.set(rec.file, rec.bytes);
      if (!rec.readOnly) syncedByWriters.set(rec.file, rec.bytes);
    } else if (kind === 'D') {
      synced.delete(`${dev}:${ino}`);
      syncedByWriters.delete(`${dev}:${ino}`);
    }
  }
  return { syncs, synced, syncedByWriters };
}

export function fileKey(path: string): string {
  const st = statSync(path, { bigint: true });
  return `${st.dev}:${st.ino}`;
}

function* regularFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* regularFiles(path);
    else if (entry.isFile()) yield path;
  }
}

export interface PowerCut {
  /** Files cut shorter (path → bytes dropped). */
  cut: Map<string, number>;
  bytesDropped: number;
}

/**
 * Cuts the power of a data directory whose server is dead: each regular file is truncated to
 * its last synced length; a file never synced is emptied. Call only after the process exited.
 */
export function cutPower(dataDir: string, ledgerFile: string): PowerCut {
  const { synced } = readLedger(ledgerFile);
  const cut = new Map<string, number>();
  let bytesDropped = 0;
  for (const path of regularFiles(dataDir)) {
    const size = statSync(path).size;
    const keep = synced.get(fileKey(path)) ?? 0;
    if (size <= keep) continue;
    truncateSync(path, keep);
    cut.set(path, size - keep);
    bytesDropped += size - keep;
  }
  return { cut, bytesDropped };
}
