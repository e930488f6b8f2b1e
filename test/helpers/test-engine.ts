// An Engine for tests that drive commits by hand: it never snapshots on its own, and a fatal
// error fails the test at once instead of stopping a server.
import type { Logger } from 'pino';
import { Engine } from '../../src/engine/engine.js';
import type { LogStore, SnapshotFiles } from '../../src/engine/ports.js';
import type { Holder } from '../../src/state/holder.js';

export function testEngine(holder: Holder, log: LogStore, snapshots: SnapshotFiles, logger: Logger): Engine {
  return new Engine(
    holder,
    log,
    snapshots,
    { snapshotEveryEvents: Infinity, snapshotEveryBytes: Infinity },
    logger,
    (e) => {
      throw e;
    },
  );
}
