// A read's wait for this node to have applied the offsets it must see: the coordinator's meta
// offset (query-fanout.ts), a holder's meta and partitions (partial-runner.ts). It ends with the
// query's client and with its deadline — a lagging node answers the query's timeout rather than
// hold it — and its signals are made only here: callers come only for an offset still ahead, and
// most reads find every offset applied already.
import { type QueryBudget, budgetSignal, checkBudget } from '../../executor/index.js';
import type { ClusterTopic, ClusterView } from '../types.js';

/** An offset of a topic's partition this node has not applied yet. */
export type AheadOffset = readonly [topic: ClusterTopic, partition: number, offset: string];

/** Waits until this node has applied each offset; `timeoutMs` undefined: no deadline of its own. */
export async function appliedWithin(
  view: Pick<ClusterView, 'waitApplied'>,
  ahead: readonly AheadOffset[],
  budget: QueryBudget,
  timeoutMs: number | undefined,
): Promise<void> {
  const client = budgetSignal(budget);
  const timeout = timeoutMs === undefined ? undefined : AbortSignal.timeout(Math.ceil(timeoutMs));
  const signal = timeout === undefined ? client : client === undefined ? timeout : AbortSignal.any([client, timeout]);
  await Promise.all(ahead.map(([topic, p, offset]) => view.waitApplied(topic, p, offset, signal))).catch(
    (err: unknown) => {
      checkBudget(budget);
      throw err;
    },
  );
}
