// wrk (Debian's package: one C thread, keep-alive connections) run by the bench against a URL:
// a POST with a fixed body for a fixed time, parsed into requests/s and latency percentiles.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { processCpuSeconds } from './process-cpu.js';
import { removeDir, tempDir } from './server-child.js';

const run = promisify(execFile);

export interface WrkResult {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** The server's CPU time a request over the run (µs), when its PID was given. */
  cpuUs?: number;
}

/**
 * POSTs `body` to `url` over `connections` connections of one wrk thread for `seconds`; with
 * `serverPid`, also the server's CPU time a request.
 */
export async function wrkPost(
  url: string,
  body: string,
  connections: number,
  seconds: number,
  serverPid?: number,
): Promise<WrkResult> {
  const dir = tempDir('wrk');
  try {
    const script = join(dir, 'post.lua');
    writeFileSync(
      script,
      `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\nwrk.headers["Content-Type"] = "text/plain"\n`,
    );
    const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, url];
    const cpuBefore = serverPid === undefined ? undefined : processCpuSeconds(serverPid);
    const { stdout } = await run('wrk', args, { timeout: (seconds + 30) * 1000 });
    const cpuAfter = serverPid === undefined ? undefined : processCpuSeconds(serverPid);
    const result = parseWrk(stdout);
    if (cpuBefore === undefined || cpuAfter === undefined || result.requests === 0) return result;
    return { ...result, cpuUs: ((cpuAfter - cpuBefore) * 1e6) / result.requests };
  } finally {
    removeDir(dir);
  }
}

export function parseWrk(out: string): WrkResult {
  if (/Non-2xx or 3xx responses/.test(out) || /Socket errors/.test(out)) throw new Error(`wrk saw errors:\n${out}`);
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(out);
  if (rate === null) throw new Error(`no rate in wrk's output:\n${out}`);
  const requests = /(\d+) requests in/.exec(out);
  return {
    perSecond: Number(rate[1]),
    p50Ms: percentileMs(out, '50%'),
    p99Ms: percentileMs(out, '99%'),
    requests: requests === null ? 0 : Number(requests[1]),
  };
}

function percentileMs(out: string, label: string): number {
  const m = new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(out);
  if (m === null) throw new Error(`no ${label} latency in wrk's output:\n${out}`);
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
}
