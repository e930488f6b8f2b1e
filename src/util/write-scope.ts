// Which log sequences one request wrote, so that work tied to a write (waiting for the Kafka
// mirror under --kafka-mirror-ack kafka) is done for writes only and never delays a read.
// The HTTP layer opens a scope per request; Engine.write notes the last sequence it staged.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface WriteScope {
  /** Highest sequence this request staged; 0 while it wrote nothing. */
  lastSeq: number;
}

const scopes = new AsyncLocalStorage<WriteScope>();

export function runInWriteScope<T>(scope: WriteScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

export function noteWrite(seq: number): void {
  const s = scopes.getStore();
  if (s !== undefined && seq > s.lastSeq) s.lastSeq = seq;
}
