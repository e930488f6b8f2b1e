// An import body's protobuf decode on a thread of its own, for the coordinator that decodes the
// body it is sending (CommandApplier.predecode): on the request thread the decode held kafkajs
// back from the send it had just begun (a 1 MB produce took 6.9 ms alone, 15.9 ms with a 9 ms
// decode after it). The body is copied there (the send still needs it); the arrays come back by
// transfer. Started at the first large body; it never keeps the process alive.
import type { Worker } from 'node:worker_threads';
import { siblingModule, startWorker } from '../util/worker-thread.js';
import type { DecodeAnswer, DecodeAsk } from './import-decode-protocol.js';
import {
  type ImportRequest,
  type ImportValueRequest,
  decodeImportRequest,
  decodeImportValueRequest,
} from './import-request.js';

/** Below this the message round trip costs more than the decode it would move. */
export const OFF_THREAD_MIN_BYTES = 64 * 1024;

interface Pending {
  resolve: (a: DecodeAnswer) => void;
  reject: (e: Error) => void;
}

export class ImportDecodeThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor(private readonly minBytes = OFF_THREAD_MIN_BYTES) {}

  /** Whether a body is large enough to go to the thread (else bits() and values() decode here). */
  takes(body: Uint8Array): boolean {
    return body.byteLength >= this.minBytes;
  }

  /** decodeImportRequest, off the request thread for a large body; rejects as it throws. */
  async bits(body: Uint8Array): Promise<ImportRequest> {
    if (!this.takes(body)) return decodeImportRequest(body);
    const a = await this.ask({ id: this.nextId++, format: 'bits', body });
    if (!('request' in a) || a.format !== 'bits') throw new Error('import decode thread: wrong answer');
    return a.request;
  }

  /** decodeImportValueRequest, as bits(). */
  async values(body: Uint8Array): Promise<ImportValueRequest> {
    if (!this.takes(body)) return decodeImportValueRequest(body);
    const a = await this.ask({ id: this.nextId++, format: 'values', body });
    if (!('request' in a) || a.format !== 'values') throw new Error('import decode thread: wrong answer');
    return a.request;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w !== undefined) await w.terminate();
  }

  private ask(m: DecodeAsk): Promise<DecodeAnswer> {
    const worker = this.thread();
    return new Promise<DecodeAnswer>((resolve, reject) => {
      this.pending.set(m.id, { resolve, reject });
      // A copy of the body's own bytes, moved: cloning the view would copy all of its buffer.
      const body = m.body.slice();
      worker.postMessage({ ...m, body }, [body.buffer]);
    }).then((a) => {
      if ('error' in a) throw new Error(a.error);
      return a;
    });
  }

  private thread(): Worker {
    if (this.worker !== undefined) return this.worker;
    const w = startWorker(siblingModule('import-decode-worker', import.meta.url));
    w.unref();
    w.on('message', (a: DecodeAnswer) => {
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
    w.on('exit', (code) => fail(new Error(`import decode thread exited with code ${code}`)));
    this.worker = w;
    return w;
  }
}
