// A query's "now". Only a time range without `to` needs it (it ends at now + 1 day), and
// reading the wall clock costs as much as the rest of a small query's bookkeeping, so the clock
// is read on first use and then stays fixed for the whole query, restarts of an async query
// included.
import { type Clock, systemClock } from '../util/clock.js';

export class QueryClock {
  private at: number | undefined;
  private readonly clock: Clock;

  /** `at`: a pinned time (ms since epoch, as tests pass), or the clock to read on first use. */
  constructor(at?: number | Clock) {
    if (typeof at === 'number') this.at = at;
    this.clock = typeof at === 'object' ? at : systemClock;
  }

  now(): number {
    this.at ??= this.clock.now();
    return this.at;
  }
}
