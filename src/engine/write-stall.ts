// Writes stalled by a full disk, and their resumption. An append that fails for lack of space
// (LevelDB's own ENOSPC, or its background error: a compaction or memtable flush that ran out of
// space, which LevelDB then returns for every later write) leaves memory ahead of the log. Instead
// of ending the process, the engine:
//   1. refuses writes (507, with LevelDB's reason) and answers reads from a state rebuilt from the
//      log as it stands (snapshot + replay, what a restart would do; LevelDB still reads);
//   2. probes every second: once free space is back above the reserve it reopens LevelDB — the
//      only way LevelDB clears a background error — and, if the log then holds other records than
//      the rebuilt state, rebuilds again; then writes resume.
import type { Logger } from 'pino';
import type { Holder } from '../state/holder.js';
import type { Clock } from '../util/clock.js';
import { bootstrap } from './bootstrap.js';
import type { LogStore, SnapshotFiles } from './ports.js';

const PROBE_MS = 1000;

export interface StallHost {
  log: LogStore;
  snapshots: SnapshotFiles;
  logger: Logger;
  clock: Clock;
  /** Why writes would be refused now (the disk reserve), or undefined. */
  shortfall(): string | undefined;
  /** Installs a state rebuilt from the log (reads answer from it). */
  install(holder: Holder): void;
  /** Writes go on from the log's last record. */
  resume(lastSeq: number): void;
  /** Still stalled (not stopping). */
  stalled(): boolean;
}

/** Rebuilds the state, then probes until LevelDB reopens with room to write. */
export async function recoverFromStall(host: StallHost, reason: Error): Promise<void> {
  host.logger.error(
    { err: reason.message },
    'writes stopped: a log append failed for lack of space; reads go on from the log as it stands, writes resume once space returns',
  );
  let installed = await rebuild(host);
  for (;;) {
    await host.clock.sleep(PROBE_MS);
    if (!host.stalled()) return;
    const short = host.shortfall();
    if (short !== undefined) continue;
    try {
      await host.log.reopen?.();
    } catch (err) {
      host.logger.warn({ err: String(err) }, 'writes still stopped: LevelDB could not be reopened yet');
      continue;
    }
    if (host.log.lastSeq !== installed) installed = await rebuild(host);
    host.resume(host.log.lastSeq);
    host.logger.info({ seq: installed }, 'writes resumed: LevelDB reopened with space to write');
    return;
  }
}

async function rebuild(host: StallHost): Promise<number> {
  const { holder } = await bootstrap(host.log, host.snapshots, host.logger, Infinity, undefined, host.clock);
  host.install(holder);
  return holder.appliedSeq;
}
