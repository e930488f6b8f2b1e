// Loaded into a bench's server process with `--import` (startChildServer's loopStall option):
// measures how long the event loop is held, two ways.
// - wall: perf_hooks' event-loop delay (the longest a timer waited past its time). On a loaded
//   machine this includes the time the process waited for a core.
// - cpu: the main thread's CPU time (Linux /proc schedstat, ns) between two runs of a 2 ms timer:
//   the longest synchronous step (or GC pause) the server itself made, whatever other load the
//   machine carries. It is an upper bound: one window can hold several short tasks.
// On SIGUSR2 both (ms, since the last signal) are written as JSON to BENCH_LOOP_STALL_FILE.
import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.BENCH_LOOP_STALL_FILE;
if (file !== undefined) {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const cpu = threadCpu();
  let last = cpu.read();
  let maxCpuNs = 0;
  setInterval(() => {
    const now = cpu.read();
    maxCpuNs = Math.max(maxCpuNs, now - last);
    last = now;
  }, 2).unref();
  process.on('SIGUSR2', () => {
    const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
    writeFileSync(file, JSON.stringify({ maxMs: ms(h.max), p99Ms: ms(h.percentile(99)), maxCpuMs: ms(maxCpuNs) }));
    h.reset();
    maxCpuNs = 0;
  });
}

/** The main thread's CPU time in ns (0 where /proc has no schedstat). */
function threadCpu(): { read(): number } {
  let fd: number;
  try {
    fd = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
  } catch {
    return { read: () => 0 };
  }
  process.once('exit', () => closeSync(fd));
  const buf = Buffer.alloc(128);
  return {
    read(): number {
      const n = readSync(fd, buf, 0, buf.length, 0);
      return Number(buf.toString('latin1', 0, n).split(' ')[0]);
    },
  };
}
