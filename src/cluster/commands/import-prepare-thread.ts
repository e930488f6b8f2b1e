// A large bits import's events built on a thread of their own, for the cluster node that holds the
// shard and is sending the import to Kafka (CommandApplier.predecode): on the request thread the
// decode and the bucketing (10-20 ms for a 1 MB body here) ran beside kafkajs's send and answer
// and held them back, and the events were ready only well after Kafka's acknowledgment. Here they
// are built while Kafka takes the command, and the request thread only decodes their records
// (the row bitmaps) and commits them.
//
// The thread gets copies of the body and of the index's and field's options as this thread looked
// them up (bitsTarget); the commit checks, as a single node's prepared import does, that the same
// index, field and options still hold, and decides afresh otherwise. The thread starts with the
// node (start()), not at the first import, which would wait for it to load.
import type { Worker } from 'node:worker_threads';
import type { Engine } from '../../engine/engine.js';
import { PreparedEvent } from '../../events/prepared.js';
import { siblingModule, startWorker } from '../../util/worker-thread.js';
import { type PreparedBits, bitsTarget } from '../../service/import/prepare-bits.js';
import type { PrepareAnswer, PrepareAsk, PrepareWhere } from './import-prepare-protocol.js';

/** Below this the round trip to the thread costs more than the work it would move. */
export const PREPARE_THREAD_MIN_BYTES = 64 * 1024;

interface Pending {
  resolve: (a: PrepareAnswer) => void;
  reject: (e: Error) => void;
}

export class PrepareThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor(private readonly minBytes = PREPARE_THREAD_MIN_BYTES) {}

  /** Whether a body is large enough to go to the thread. */
  takes(body: Uint8Array): boolean {
    return body.byteLength >= this.minBytes;
  }

  /** Starts the thread (again after it failed); it never keeps the process alive. */
  start(): void {
    if (this.worker !== undefined) return;
    const w = startWorker(siblingModule('import-prepare-worker', import.meta.url));
    w.unref();
    w.on('message', (a: PrepareAnswer) => {
      const p = this.pending.get(a.id);
      this.pending.delete(a.id);
      p?.resolve(a);
    });
    const fail = (err: Error): void => {
      if (this.worker === w) this.worker = undefined;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`import prepare thread exited with code ${code}`)));
    this.worker = w;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w !== undefined) await w.terminate();
  }

  /**
   * The events of bits import `where` whose pairs are in `body` (a protobuf ImportRequest), built
   * on the thread; undefined when it takes the one-step decide (bitsTarget) or the thread refused
   * it (the apply then decodes the body and refuses it as every holder does). Rejects with the
   * usual 404 when the index or field is missing here.
   */
  async prepare(engine: Engine, where: PrepareWhere, body: Uint8Array): Promise<PreparedBits | undefined> {
    const target = bitsTarget(engine, where);
    if (target === undefined) return undefined;
    const { index, field, exists } = target;
    const a = await this.ask({
      id: this.nextId++,
      index: { name: index.name, options: index.options },
      field: { name: field.name, options: field.options },
      where,
      exists,
      body,
    });
    if ('error' in a) return undefined;
    return target.prepared(a.records.map((r) => PreparedEvent.fromRecord(r)));
  }

  private ask(m: PrepareAsk): Promise<PrepareAnswer> {
    this.start();
    const worker = this.worker;
    if (worker === undefined) return Promise.reject(new Error('import prepare thread: not running'));
    return new Promise<PrepareAnswer>((resolve, reject) => {
      this.pending.set(m.id, { resolve, reject });
      // A copy of the body's own bytes, moved: kafkajs is still sending the original, and
      // cloning the view would copy all of the buffer under it.
      const body = m.body.slice();
      worker.postMessage({ ...m, body }, [body.buffer]);
    });
  }
}
