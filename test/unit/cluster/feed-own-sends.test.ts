// A holder's own send and its consumer (Feed.sending, Feed.own): the broker may answer the
// consumer's fetch of a command before the producer's acknowledgment. While this node's send to
// the partition is under way, a fetched batch waits, so the command is applied once, from the
// node's own bytes with the body it decoded (not decoded again by the consumer's delivery);
// once the send settled the batch is delivered, and what own applied is skipped. A batch of a
// partition with no send under way is delivered at once.
import { describe, expect, it } from 'vitest';
import { Feed } from '../../../src/cluster/commands/feed.js';
import { Positions } from '../../../src/cluster/commands/positions.js';
import type { ClusterMessage, ClusterTopic, CommandSink, DecodedBody } from '../../../src/cluster/types.js';

interface Delivered {
  partition: number;
  offsets: string[];
  /** Whether each message came with its body decoded (an own apply). */
  decoded: boolean[];
}

/** A CommandSink that records what it is given. */
function recordingSink(): CommandSink & { got: Delivered[] } {
  const got: Delivered[] = [];
  return {
    got,
    async deliver(_topic: ClusterTopic, partition: number, messages: readonly ClusterMessage[]): Promise<void> {
      got.push({
        partition,
        offsets: messages.map((m) => m.offset),
        decoded: messages.map((m) => m.decodedBody !== undefined),
      });
    },
  };
}

const message = (offset: string): ClusterMessage => ({ offset, value: Buffer.from('command') });
const decodedBody = Promise.resolve({ format: 'values' } as unknown as DecodedBody);

describe('Feed: a holder’s own sends and its consumer', () => {
  it('holds a fetched batch back until the own apply was tried, so the command is applied once, decoded', async () => {
    const sink = recordingSink();
    const feed = new Feed('log', sink, new Positions());
    const settle = feed.sending(3);
    // The consumer's fetch answered first.
    const consumed = feed.deliverBatch({ partition: 3, messages: [message('0')], lastOffset: '0' });
    // Then the acknowledgment: the own apply.
    expect(await feed.own(3, { ...message('0'), decodedBody })).toBe(true);
    settle();
    await consumed;
    expect(sink.got).toEqual([{ partition: 3, offsets: ['0'], decoded: [true] }]);
  });

  it('delivers a batch of a partition with no own send under way, and after a send settled', async () => {
    const sink = recordingSink();
    const feed = new Feed('log', sink, new Positions());
    const settle = feed.sending(1);
    await feed.deliverBatch({ partition: 2, messages: [message('0')], lastOffset: '0' });
    expect(sink.got).toEqual([{ partition: 2, offsets: ['0'], decoded: [false] }]);
    // A send that failed (no own apply): the consumer delivers the partition's batch.
    settle();
    settle();
    await feed.deliverBatch({ partition: 1, messages: [message('0')], lastOffset: '0' });
    expect(sink.got[1]).toEqual({ partition: 1, offsets: ['0'], decoded: [false] });
  });
});
