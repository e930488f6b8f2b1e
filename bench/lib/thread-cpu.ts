// CPU time of a process's threads, read from /proc (Linux): the main thread (its id is the
// process's) apart from the rest (worker threads, V8's GC helpers, libuv's pool). On a shared
// machine wall-clock rates move with the load; CPU time per request moves much less, so a bench
// prints it beside the rates to show where a request's time goes.
import { readFileSync, readdirSync } from 'node:fs';

/** ms of CPU (user + system) so far: the main thread, and every other thread of the process. */
export interface ThreadCpu {
  main: number;
  others: number;
}

/** Clock ticks a second as the kernel counts utime and stime (USER_HZ: 100 on Linux). */
const TICK_MS = 10;

export function threadCpu(pid: number): ThreadCpu {
  let main = 0;
  let others = 0;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return { main: 0, others: 0 };
  }
  for (const tid of tasks) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended between the listing and the read
    }
    // Fields after the command name (which may hold spaces, hence the last ')'): utime, stime
    // are the 12th and 13th of them.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (Number(f[11]) + Number(f[12])) * TICK_MS;
    if (Number(tid) === pid) main += ms;
    else others += ms;
  }
  return { main, others };
}

/** CPU ms per request between two readings. */
export function cpuPerRequest(before: ThreadCpu, after: ThreadCpu, requests: number): ThreadCpu {
  const n = Math.max(1, requests);
  return { main: (after.main - before.main) / n, others: (after.others - before.others) / n };
}
