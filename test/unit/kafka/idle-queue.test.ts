// kafkajs's request queue as src/kafka/kafkajs-idle-queue.ts leaves it: with nothing queued no
// check is scheduled (kafkajs 2.2.4 ran one every 1 ms for ever), a request that cannot be sent
// at once (too many in flight) is sent once an answer frees a slot, and one queued behind a
// client-side throttle is sent when the throttle ends, by the check scheduled for it.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { kafkajs } from '../../../src/kafka/kafkajs.js';
import { until } from '../../helpers/until.js';

const require = createRequire(import.meta.url);

interface Entry {
  correlationId: number;
  resolve(): void;
  reject(): void;
}

interface Queue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  inflight: Map<number, unknown>;
  push(r: { entry: Entry; expectResponse: boolean; sendRequest(): void }): void;
  fulfillRequest(a: { correlationId: number; payload: Buffer; size: number }): void;
  checkPendingRequests(): void;
  destroy(): void;
}

function queue(maxInFlightRequests: number | null): Queue {
  kafkajs();
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as new (o: object) => Queue;
  const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  return new RequestQueue({
    maxInFlightRequests,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: 'test',
    broker: 'b:9092',
    logger: quiet,
  });
}

const request = (id: number, sent: number[]) => ({
  entry: { correlationId: id, resolve: () => undefined, reject: () => undefined },
  expectResponse: true,
  sendRequest: () => sent.push(id),
});

describe('kafkajs request queue (idle timer loop removed)', () => {
  it('schedules no check while nothing is queued', () => {
    const q = queue(null);
    const sent: number[] = [];
    q.push(request(1, sent));
    expect(sent).toEqual([1]);
    q.fulfillRequest({ correlationId: 1, payload: Buffer.alloc(0), size: 0 });
    q.checkPendingRequests();
    expect(q.throttleCheckTimeoutId).toBeNull();
    q.destroy();
  });

  it('sends a request held by the in-flight limit when an answer frees a slot', async () => {
    const q = queue(1);
    const sent: number[] = [];
    q.push(request(1, sent));
    q.push(request(2, sent));
    expect(sent).toEqual([1]);
    q.fulfillRequest({ correlationId: 1, payload: Buffer.alloc(0), size: 0 });
    expect(sent).toEqual([1, 2]);
    q.fulfillRequest({ correlationId: 2, payload: Buffer.alloc(0), size: 0 });
    // The check scheduled when request 2 was queued runs once, finds nothing, and schedules none.
    await until(() => q.throttleCheckTimeoutId === null, { what: 'no check scheduled with nothing queued' });
    q.destroy();
  });

  it('sends a request queued behind a throttle when the throttle ends', async () => {
    const q = queue(null);
    const sent: number[] = [];
    q.throttledUntil = Date.now() + 30;
    q.push(request(1, sent));
    expect(sent).toEqual([]);
    expect(q.throttleCheckTimeoutId).not.toBeNull();
    await until(() => sent.length === 1, { what: 'the throttled request to be sent' });
    q.fulfillRequest({ correlationId: 1, payload: Buffer.alloc(0), size: 0 });
    expect(q.throttleCheckTimeoutId).toBeNull();
    q.destroy();
  });
});
