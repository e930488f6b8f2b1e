// Which log sequences one HTTP request wrote, so that waiting for the Kafka mirror under
// --kafka-mirror-ack kafka is done for writes only and never delays a read. The routes open a
// scope per request; Engine.onStaged reports every commit's last sequence synchronously, in the
// async context of the request that committed. It observes writes and steers none: what a
// commit does is given by its arguments (Engine.commit), never by an ambient scope.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestWrites {
  /** Highest sequence this request staged; 0 while it wrote nothing. */
  lastSeq: number;
}

const requests = new AsyncLocalStorage<RequestWrites>();

export function runInRequest<T>(writes: RequestWrites, fn: () => T): T {
  return requests.run(writes, fn);
}

/** Engine.onStaged listener: notes `seq` on the request whose commit staged it, if any. */
export function noteStaged(seq: number): void {
  const w = requests.getStore();
  if (w !== undefined && seq > w.lastSeq) w.lastSeq = seq;
}
