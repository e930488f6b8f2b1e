// One info line per request, capped: above `maxPerSecond` lines in a second the rest of that
// second is only counted, and one summary line says how many went unlogged. The cap keeps the
// log's cost a small fraction of the request rate on hot query paths (measured in bench/query-http).
import type { Logger } from 'pino';
import { systemClock } from '../util/clock.js';

export interface AccessEntry {
  reqId: string;
  method: string;
  url: string;
  status: number;
  ms: number;
  bytes: number;
}

export class AccessLog {
  private windowStart = 0;
  private logged = 0;
  private suppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly maxPerSecond: number,
  ) {}

  record(e: AccessEntry, now = systemClock.now()): void {
    if (now - this.windowStart >= 1000) {
      if (this.suppressed > 0)
        this.logger.info(
          { unlogged: this.suppressed, logged: this.logged },
          `access log: ${this.suppressed} more requests in the last second not logged (cap ${this.maxPerSecond}/s)`,
        );
      this.windowStart = now;
      this.logged = 0;
      this.suppressed = 0;
    }
    if (this.logged >= this.maxPerSecond) {
      this.suppressed++;
      return;
    }
    this.logged++;
    this.logger.info(
      {
        reqId: e.reqId,
        method: e.method,
        url: e.url,
        status: e.status,
        ms: Math.round(e.ms * 100) / 100,
        bytes: e.bytes,
      },
      'request',
    );
  }
}
