// A query's "now". Only a time range without `to` needs it (it ends at now + 1 day), and
// Date.now() costs as much as the rest of a small query's bookkeeping, so the clock is read on
// first use and then stays fixed for the whole query, restarts of an async query included.
export class QueryClock {
  /** `at`: a pinned time (ms since epoch), as tests and callers with their own clock pass. */
  constructor(private at?: number) {}

  now(): number {
    this.at ??= Date.now();
    return this.at;
  }
}
