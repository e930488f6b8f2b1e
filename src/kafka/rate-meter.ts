import { systemClock } from '../util/clock.js';

/** Records per second over windows of about a second, for ingest and replica status. */
export class RateMeter {
  private since = 0;
  private records = 0;
  perSec = 0;

  add(n: number): void {
    const now = systemClock.monotonic();
    if (now - this.since > 1_000) {
      if (this.since > 0) this.perSec = Math.round((this.records * 1000) / (now - this.since));
      this.since = now;
      this.records = 0;
    }
    this.records += n;
  }
}
