// The read-committed filter that replaces kafkajs's (src/kafka/aborted-transactions.ts): records
// of aborted transactions are dropped whatever order the broker lists the transactions in, also
// when the fetch starts inside them, and a producer's later committed records are kept.
import { describe, expect, it } from 'vitest';
import { type FetchedRecord, withoutAborted } from '../../../src/kafka/aborted-transactions.js';

const ABORT = Buffer.from([0, 0, 0, 0]);
const COMMIT = Buffer.from([0, 0, 0, 1]);

function data(offset: number, producerId: string, inTransaction = true): FetchedRecord & { v: string } {
  return {
    offset: String(offset),
    key: null,
    batchContext: { producerId, inTransaction },
    v: `${producerId}@${offset}`,
  };
}
function marker(offset: number, producerId: string, key: Buffer): FetchedRecord & { v: string } {
  return {
    offset: String(offset),
    key,
    isControlRecord: true,
    batchContext: { producerId, inTransaction: true },
    v: `m${producerId}@${offset}`,
  };
}
const kept = (rs: (FetchedRecord & { v: string })[], aborted: { producerId: string; firstOffset: string }[]) =>
  withoutAborted(rs, aborted)
    .filter((r) => r.isControlRecord !== true)
    .map((r) => r.v);

describe('withoutAborted', () => {
  it('drops both of two interleaved aborted transactions listed in marker order (kafkajs kept one)', () => {
    const rs = [
      data(0, 'B'),
      data(1, 'A'),
      data(2, 'B'),
      marker(3, 'A', ABORT),
      marker(4, 'B', ABORT),
      data(5, 'C'),
      marker(6, 'C', COMMIT),
    ];
    // The broker lists A first: its marker came first, though B began first.
    expect(
      kept(rs, [
        { producerId: 'A', firstOffset: '1' },
        { producerId: 'B', firstOffset: '0' },
      ]),
    ).toEqual(['C@5']);
  });

  it('drops an aborted transaction the fetch starts inside of, and keeps a later one of the same producer', () => {
    const rs = [
      data(7, 'A'),
      data(8, 'B'),
      marker(9, 'A', ABORT),
      data(10, 'A'),
      marker(11, 'A', COMMIT),
      marker(12, 'B', ABORT),
    ];
    expect(
      kept(rs, [
        { producerId: 'A', firstOffset: '3' },
        { producerId: 'B', firstOffset: '5' },
      ]),
    ).toEqual(['A@10']);
  });

  it('keeps records outside transactions and everything when nothing was aborted', () => {
    const rs = [data(0, 'A', false), data(1, 'B'), marker(2, 'B', COMMIT)];
    expect(kept(rs, [{ producerId: 'A', firstOffset: '0' }])).toEqual(['A@0', 'B@1']);
    expect(kept(rs, [])).toEqual(['A@0', 'B@1']);
  });
});
