// How much work a read query is, guessed before running it, for the offload decision: a job
// sent to the query workers costs the request thread and the workers together about 150–300 µs
// of CPU more than running it here (four thread hand-overs, the job and its answer cloned), so a
// query whose work is smaller than that is cheaper on the request thread (issue 24: a Count of
// two rows over 16 shards took 590 µs of CPU through the workers against 270 here).
import { STANDARD_VIEW } from '../../domain/names.js';
import type { BitmapPlan, ReadPlan } from '../../executor/plan.js';
import type { ReadContext } from '../../executor/context.js';
import { resolveRow } from '../../executor/refs.js';
import { innermostPlan } from '../../executor/partial.js';
import type { Reads } from '../../executor/reads.js';

/**
 * Bits in the rows a query reads, over its shards, counted up to `cap` (the answer is then ≥
 * cap): Count calls over plain rows and their combinations; 0 when a call answers columns (it
 * stays on the request thread). Other calls (GroupBy,
 * Rows, BSI ranges and aggregates, time ranges, Not) answer Infinity: their work is not bounded
 * by a few rows' sizes, and they go to the workers as before.
 */
export function rowBitsRead(reads: Reads, cap: number): number {
  // A call that answers columns stays here whatever its size: its answer would come back from
  // the workers as one structured clone, deserialized in one step on this thread (636 ms for a
  // 10M-column Row() in the big-answers bench), where the request thread builds it shard by
  // shard between turns of the event loop.
  if (reads.plans.some((plan) => innermostPlan(plan).kind === 'bitmap')) return 0;
  let bits = 0;
  for (const plan of reads.plans) {
    bits += planBits(reads.ctx, innermostPlan(plan), cap - bits);
    if (bits >= cap) return bits;
  }
  return bits;
}

function planBits(ctx: ReadContext, p: Exclude<ReadPlan, { kind: 'options' }>, cap: number): number {
  if (p.kind === 'count') return bitmapBits(ctx, p.child, cap);
  return Number.POSITIVE_INFINITY;
}

function bitmapBits(ctx: ReadContext, p: BitmapPlan, cap: number): number {
  switch (p.kind) {
    case 'empty':
      return 0;
    case 'row': {
      const id = resolveRow(ctx.index, p.field, p.row);
      if (id === undefined) return 0;
      // The view looked up once, not once a shard: ctx.shards are the context's shards, which
      // ctx.fragment() would let through anyway.
      const view = p.field.view(p.view ?? STANDARD_VIEW);
      if (view === undefined) return 0;
      let bits = 0;
      for (const shard of ctx.shards) {
        bits += view.fragment(shard)?.rowSize(id) ?? 0;
        if (bits >= cap) return bits;
      }
      return bits;
    }
    case 'union':
    case 'intersect':
    case 'difference':
    case 'xor': {
      let bits = 0;
      for (const c of p.children) {
        bits += bitmapBits(ctx, c, cap - bits);
        if (bits >= cap) return bits;
      }
      return bits;
    }
    default:
      return Number.POSITIVE_INFINITY;
  }
}
