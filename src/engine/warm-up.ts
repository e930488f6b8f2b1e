// After a restart the snapshot's fragments are decoded on first touch (state/fragment.ts), so the
// server answers at once. Warm-up decodes the untouched rest in the background, a slice at a time
// between other work, so the first query over every shard does not pay for all of them at once.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Fragment } from '../state/fragment.js';
import type { Holder } from '../state/holder.js';

/** Each slice decodes fragments for about this long before yielding to requests. */
const SLICE_MS = 5;

/** Fragments whose rows are still deferred. */
export function deferredFragments(holder: Holder): Fragment[] {
  const out: Fragment[] = [];
  for (const index of holder.indexes.values())
    for (const field of index.fields.values())
      for (const view of field.views.values())
        for (const frag of view.fragments.values()) if (frag.deferred) out.push(frag);
  return out;
}

/**
 * Decodes `fragments` a slice at a time until done or `stopped()`; resolves with how many it
 * decoded (a fragment a query touched meanwhile is already decoded and costs nothing).
 */
export async function warmUp(fragments: Fragment[], stopped: () => boolean, logger: Logger): Promise<number> {
  const t0 = performance.now();
  let i = 0;
  while (i < fragments.length && !stopped()) {
    const until = performance.now() + SLICE_MS;
    while (i < fragments.length && performance.now() < until) fragments[i++].load();
    await nextTurn();
  }
  if (fragments.length > 0)
    logger.info(
      { fragments: i, ms: Math.round(performance.now() - t0) },
      'snapshot fragments decoded in the background',
    );
  return i;
}
