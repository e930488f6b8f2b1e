// After a restart the snapshot's fragments are decoded on first touch (state/fragment.ts), so the
// server answers at once. Warm-up decodes the untouched rest in the background, a slice at a time
// between other work, so the first query over every shard does not pay for all of them at once.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { ReadonlyFragment, ReadonlyHolder } from '../state/readonly.js';
import { type Clock, systemClock } from '../util/clock.js';

/** Each slice decodes fragments for about this long before yielding to requests. */
const SLICE_MS = 5;

/** Fragments whose rows are still deferred. */
export function deferredFragments(holder: ReadonlyHolder): ReadonlyFragment[] {
  const out: ReadonlyFragment[] = [];
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
export async function warmUp(
  fragments: ReadonlyFragment[],
  stopped: () => boolean,
  logger: Logger,
  clock: Clock = systemClock,
): Promise<number> {
  const t0 = clock.monotonic();
  let i = 0;
  while (i < fragments.length && !stopped()) {
    const until = clock.monotonic() + SLICE_MS;
    while (i < fragments.length && clock.monotonic() < until) fragments[i++].load();
    await nextTurn();
  }
  if (fragments.length > 0)
    logger.info(
      { fragments: i, ms: Math.round(clock.monotonic() - t0) },
      'snapshot fragments decoded in the background',
    );
  return i;
}
