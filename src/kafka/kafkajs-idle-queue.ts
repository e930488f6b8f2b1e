// kafkajs 2.2.4's request queue (one per broker connection) keeps a timer loop running while
// nothing is queued: after every check it schedules the next one at `throttledUntil - now`,
// which is negative when the broker never throttled (throttledUntil is -1), so Node runs it
// after 1 ms, for ever (kafkajs issues #1556, #1604, #1704). Each node holds several
// connections (consumers, producer, admin clients), and an idle three-node cluster spent most
// of its 50-75 ms/s of CPU per node there. Replaced before kafkajs uses the queue (kafkajs.ts):
// a check is scheduled only while requests wait to be sent, as kafkajs means it to be (push()
// schedules one when it queues a request, and each answer checks the queue again). While
// requests wait it behaves as kafkajs's own: at the end of a throttle, else after 10 ms
// (kafkajs's CHECK_PENDING_REQUESTS_INTERVAL), so a marginal throttle never strands a request.
import type { createRequire } from 'node:module';
import { systemClock } from '../util/clock.js';

type Require = ReturnType<typeof createRequire>;

interface RequestQueueInstance {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs's interval between checks while requests wait (requestQueue/index.js). */
const CHECK_PENDING_MS = 10;
const PATCHED = Symbol.for('bitledger.kafkajs.idleQueue');

export function quietIdleQueues(require: Require): void {
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueueInstance };
  const proto = RequestQueue.prototype;
  if (Object.hasOwn(proto, PATCHED)) return;
  Object.defineProperty(proto, PATCHED, { value: true });
  proto.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueueInstance): void {
    // Nothing waits: nothing to check until push() queues a request (and schedules then).
    if (this.pending.length === 0 || this.throttleCheckTimeoutId) return;
    // throttledUntil is kafkajs's, in wall-clock ms (Date.now()): the system clock's now().
    const untilUnthrottled = this.throttledUntil - systemClock.now();
    this.throttleCheckTimeoutId = setTimeout(
      () => {
        this.throttleCheckTimeoutId = null;
        this.checkPendingRequests();
      },
      untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_MS,
    );
  };
}
