// The server under test in its own process (started the way the README starts it), so the load
// generator and the server each get one of the machine's cores. Stopped by its PID, data removed.
// BENCH_CPU_PROF=DIR adds --cpu-prof to every child (profiles are written on clean exit, into
// DIR/<label>-<time>/; the largest file there is the main thread).
import { SERVER_NODE_FLAGS } from '../../src/config/node-flags.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { repoPath } from '../../src/util/proto-path.js';

// The repository root, whether this file runs from bench/lib (tsx) or dist/bench/lib (compiled).
export const REPO_ROOT = dirname(repoPath(import.meta.url, 'package.json'));

export interface ChildServerOptions {
  /** Appears in the CPU profile's file name. */
  label: string;
  fsync?: 'always' | 'interval' | 'never';
  extraArgs?: string[];
  /** Node options before the entry point (e.g. --expose-gc). */
  nodeArgs?: string[];
  /** Measure the server's event-loop stalls (loop-stall-preload.ts); read with loopStall(). */
  loopStall?: boolean;
}

export interface LoopStall {
  /** The longest the server's event loop was held since the last reading, ms (wall time). */
  maxMs: number;
  p99Ms: number;
  /** The most CPU time the server's main thread spent between two 2 ms timer runs, ms. */
  maxCpuMs: number;
}

export interface ChildServer {
  url: string;
  pid: number;
  dataDir: string;
  /** SIGTERM (graceful: the log is flushed and closed), SIGKILL after 60 s; keeps the data dir. */
  stop(): Promise<void>;
  /** stop() and remove the data directory. */
  dispose(): Promise<void>;
  /** The event loop's stalls since the last reading (needs the loopStall option). */
  loopStall(): Promise<LoopStall>;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `bitledger-bench-${prefix}-`));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => res(port));
    });
  });
}

/** Children alive now: an interrupted bench kills them (by PID) and removes their data. */
const live = new Map<number, string>();
let trapped = false;

function trapInterrupt(): void {
  if (trapped) return;
  trapped = true;
  const cleanUp = (signal: NodeJS.Signals): void => {
    for (const [pid, dir] of live) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
      removeDir(dir);
    }
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', cleanUp);
  process.once('SIGTERM', cleanUp);
}

/** `bitledger server` on 127.0.0.1:`port` and `dataDir`, after node's own arguments (`entry`: the script). */
export function serverArgs(entry: readonly string[], dataDir: string, port: number, logLevel: string): string[] {
  return [...entry, 'server', '--bind', `127.0.0.1:${port}`, '--data-dir', dataDir, '--log-level', logLevel];
}

export async function startChildServer(opts: ChildServerOptions): Promise<ChildServer> {
  trapInterrupt();
  const dataDir = tempDir(opts.label);
  const port = await freePort();
  const prof = process.env.BENCH_CPU_PROF;
  // One directory per server: node names each thread's profile itself (tsx's loader is a thread).
  const nodeArgs = prof ? ['--cpu-prof', '--cpu-prof-dir', join(resolve(prof), `${opts.label}-${Date.now()}`)] : [];
  // The server runs compiled when `npm run build` has produced dist/ (as `npm start` does):
  // tsx's transform adds per-closure naming calls that cost real time on hot paths.
  const entry = existsSync(join(REPO_ROOT, 'dist/src/main.js'))
    ? ['dist/src/main.js']
    : ['--import', 'tsx', 'src/main.ts'];
  const stallFile = join(dataDir, 'loop-stall.json');
  const stallArgs = opts.loopStall ? ['--import', new URL('./loop-stall-preload.js', import.meta.url).href] : [];
  const args = [
    ...SERVER_NODE_FLAGS,
    ...nodeArgs,
    ...stallArgs,
    ...(opts.nodeArgs ?? []),
    ...serverArgs(entry, dataDir, port, 'warn'),
    '--fsync',
    opts.fsync ?? 'always',
    ...(opts.extraArgs ?? []),
  ];
  const env = opts.loopStall ? { ...process.env, BENCH_LOOP_STALL_FILE: stallFile } : process.env;
  const proc = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (d: Buffer): void => {
    output = (output + d.toString()).slice(-20_000);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  if (proc.pid !== undefined) live.set(proc.pid, dataDir);
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(proc, url, () => output);
  } catch (err) {
    await kill(proc, exited);
    if (proc.pid !== undefined) live.delete(proc.pid);
    removeDir(dataDir);
    throw err;
  }
  const stop = async (): Promise<void> => {
    await kill(proc, exited);
    if (proc.pid !== undefined) live.delete(proc.pid);
    if (proc.exitCode !== 0 && proc.signalCode === null && proc.exitCode !== null)
      console.error(`  ! server ${opts.label} exited with ${proc.exitCode}: ${output.slice(-2000)}`);
  };
  return {
    url,
    pid: proc.pid ?? -1,
    dataDir,
    stop,
    async dispose() {
      await stop();
      removeDir(dataDir);
    },
    loopStall: () => readLoopStall(proc, stallFile),
  };
}

/** Signals the server for its stall figures and waits for the file it writes. */
async function readLoopStall(proc: ChildProcess, file: string): Promise<LoopStall> {
  rmSync(file, { force: true });
  proc.kill('SIGUSR2');
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (existsSync(file)) {
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as LoopStall;
      } catch {
        // written but not yet whole: read again
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the server did not write its event-loop stall figures (started without loopStall?)');
}

async function waitReady(proc: ChildProcess, url: string, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode} before listening: ${output()}`);
    try {
      if ((await fetch(`${url}/status`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not start within 60 s: ${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function kill(proc: ChildProcess, exited: Promise<void>): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
  await exited;
  clearTimeout(timer);
}
