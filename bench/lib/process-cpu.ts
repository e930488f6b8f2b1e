// CPU time a process has used (user + system, all its threads), from /proc/PID/stat: a server's
// CPU time per request over a load run is a cost that a busy machine moves far less than req/s
// or latency (those wait for a core; CPU time counts only the time the process ran).
import { readFileSync } from 'node:fs';

/** The kernel's clock ticks a second (USER_HZ): 100 on Linux on every architecture Node supports. */
const TICKS_A_SECOND = 100;

/** Seconds of CPU used so far by process `pid`; undefined where /proc is not there. */
export function processCpuSeconds(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state); utime and stime are fields 14 and 15.
  return (Number(rest[11]) + Number(rest[12])) / TICKS_A_SECOND;
}
