// One incarnation of the server as the simulator runs it: the real EventLog over the in-memory
// KvStore, the real bootstrap (snapshot + replay) and Engine, and the services the HTTP routes
// call (schema, queries, imports), all on the virtual clock. A crash kills the incarnation: its
// disk handles and timers die, and the requests it had not answered are told so.
import pino from 'pino';
import { bootstrap } from '../src/engine/bootstrap.js';
import { Engine } from '../src/engine/engine.js';
import { ImportService } from '../src/service/import/import-service.js';
import { QueryService } from '../src/service/query-service.js';
import { SchemaService } from '../src/service/schema-service.js';
import { EventLog } from '../src/storage/event-log.js';
import type { MemoryDisk } from '../src/storage/memory/memory-disk.js';
import { MemoryKv } from '../src/storage/memory/memory-kv.js';
import { MemorySnapshots } from '../src/storage/memory/memory-snapshots.js';
import type { Clock } from '../src/util/clock.js';

const silent = pino({ level: 'silent' });

export interface NodeSettings {
  snapshotEveryEvents: number;
  maxBatchRecords: number;
}

export class SimNode {
  fatal: Error | undefined;
  private killed = false;
  private onKill: (() => void)[] = [];
  /** Settles (never rejects) when the incarnation is killed. */
  readonly gone: Promise<void>;

  private constructor(
    readonly incarnation: number,
    readonly engine: Engine,
    readonly log: EventLog,
    readonly schema: SchemaService,
    readonly queries: QueryService,
    readonly imports: ImportService,
  ) {
    this.gone = new Promise<void>((resolve) => this.onKill.push(resolve));
  }

  static async open(
    disk: MemoryDisk,
    clock: Clock,
    incarnation: number,
    settings: NodeSettings,
    onFatal: (node: SimNode, err: Error) => void,
  ): Promise<SimNode> {
    const log = await EventLog.openOn(new MemoryKv(disk), { fsync: 'always', logger: silent, clock });
    const snapshots = new MemorySnapshots(disk);
    const { holder } = await bootstrap(log, snapshots, silent, Infinity, undefined, clock);
    let node: SimNode | undefined;
    const engine = new Engine(
      holder,
      log,
      snapshots,
      {
        snapshotEveryEvents: settings.snapshotEveryEvents,
        snapshotEveryBytes: 1 << 30,
        clock,
        heapTrim: false,
        commitQueue: { maxBatchRecords: settings.maxBatchRecords },
      },
      silent,
      (err) => {
        if (node === undefined) return;
        node.fatal = err;
        onFatal(node, err);
      },
    );
    node = new SimNode(
      incarnation,
      engine,
      log,
      new SchemaService(engine),
      new QueryService(engine),
      new ImportService(engine),
    );
    return node;
  }

  get alive(): boolean {
    return !this.killed;
  }

  /** The incarnation is gone (its disk crashed under it): waiters are told. */
  kill(): void {
    if (this.killed) return;
    this.killed = true;
    for (const f of this.onKill.splice(0)) f();
  }

  /** `work`'s outcome, or 'gone' when the incarnation is killed first. */
  race<T>(work: Promise<T>): Promise<{ ok: T } | { err: unknown } | 'gone'> {
    return Promise.race([
      work.then(
        (ok) => ({ ok }),
        (err: unknown) => ({ err }),
      ),
      this.gone.then(() => 'gone' as const),
    ]);
  }
}
