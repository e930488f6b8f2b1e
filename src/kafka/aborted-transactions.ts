// Which fetched records a read-committed consumer may see. kafkajs's own filter
// (kafkajs/src/consumer/filterAbortedMessages.js) takes at most one aborted transaction per
// record and assumes the broker lists them by first offset; the broker lists them in the order
// their abort markers were written. Two transactions aborted in the other order than they began
// (a killed node's producers, fenced one by one when another node takes its partitions over)
// leaked records of the second into the cluster's holders (test/integration/kafka-aborted.test.ts
// shows it against a real broker). This is the Java client's rule: every aborted transaction whose
// first offset is at or below a record marks its producer aborted until that producer's abort
// marker.

/** The fields of a kafkajs fetched record this filter reads. */
export interface FetchedRecord {
  offset: string;
  key?: Buffer | null;
  isControlRecord?: boolean;
  batchContext: { producerId: string; inTransaction: boolean };
}

export interface AbortedTransaction {
  producerId: string;
  firstOffset: string;
}

/** An abort marker's key: control record version 0, type 0 (a commit marker is type 1). */
const ABORT_KEY = Buffer.from([0, 0, 0, 0]);

function isAbortMarker(r: FetchedRecord): boolean {
  return r.isControlRecord === true && r.key != null && Buffer.from(r.key).equals(ABORT_KEY);
}

/** `records` (offset order) without those of aborted transactions; control records are kept. */
export function withoutAborted<R extends FetchedRecord>(
  records: readonly R[],
  aborted: readonly AbortedTransaction[] | undefined,
): R[] {
  if (aborted === undefined || aborted.length === 0) return [...records];
  const pending = [...aborted].sort((a, b) => compareOffsets(a.firstOffset, b.firstOffset));
  const abortedProducers = new Set<string>();
  let next = 0;
  return records.filter((r) => {
    const offset = BigInt(r.offset);
    while (next < pending.length && BigInt(pending[next].firstOffset) <= offset) {
      abortedProducers.add(String(pending[next].producerId));
      next++;
    }
    const producer = String(r.batchContext.producerId);
    if (isAbortMarker(r)) {
      abortedProducers.delete(producer);
      return true;
    }
    return !(r.batchContext.inTransaction && abortedProducers.has(producer));
  });
}

function compareOffsets(a: string, b: string): number {
  const d = BigInt(a) - BigInt(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}
