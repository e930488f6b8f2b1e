// Work that can pause: a generator that yields between pieces of a long computation (import
// validation, bucketing, encoding). The same work runs straight through where it must be one
// synchronous step (inside Engine.write), or returns to the event loop between pieces where it
// may be spread out (preparing a large import before its write), so that /status and small
// queries are answered meanwhile.
import { type Clock, systemClock } from './clock.js';

export type Steps<T> = Generator<void, T, undefined>;

/** Runs `work` to its end without pausing. */
export function runSteps<T>(work: Steps<T>): T {
  for (;;) {
    const r = work.next();
    if (r.done === true) return r.value;
  }
}

/** Runs `work`, returning to the event loop whenever a stretch has taken `sliceMs` or more. */
export async function runStepsYielding<T>(work: Steps<T>, clock: Clock = systemClock, sliceMs = 5): Promise<T> {
  let start = clock.monotonic();
  for (;;) {
    const r = work.next();
    if (r.done === true) return r.value;
    if (clock.monotonic() - start < sliceMs) continue;
    await new Promise<void>((resolve) => setImmediate(resolve));
    start = clock.monotonic();
  }
}

/** Items per piece of a plain loop over import pairs: well under a millisecond each. */
export const STEP_ITEMS = 1 << 16;
