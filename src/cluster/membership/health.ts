// Which other members answer now. Kafka drops a dead member from the group only after its session
// timeout (seconds), and a stopped process (SIGSTOP) keeps its TCP port open: both would keep a
// node READY and listed as a shard's holder meanwhile. So every member probes the others itself
// (GET /internal/cluster/ping every 0.5 s with a short timeout) and takes a failed call to a member
// as a failure too: after DOWN_AFTER failures in a row a member is down (not READY in /status, last
// among a partition's holders, out of /internal/fragment/nodes) until a probe answers again.
// A member whose probe failed is probed again at once, not at the next interval: a stopped member
// is down within interval + 2 × timeout (2.1 s, inside the 3 s /status promises). Probing less
// often (0.75 s) saved an idle node only a few ms of CPU a second and left 0.65 s of that margin
// for a loaded machine's late timers, so the interval stays 0.5 s.
import type { Clock, ClockTimer } from '../../util/clock.js';
import type { Member } from '../types.js';

/** The route every member answers at once, whatever it is doing. */
export const PING_PATH = '/internal/cluster/ping';

export interface HealthOptions {
  /** The other members to probe now (the map's members less this node). */
  others(): readonly Member[];
  /** A request to a member (with the members' token). */
  fetch(url: string, init: RequestInit): Promise<Response>;
  clock: Clock;
  /** Between probes of one member while it answers (default 500 ms). */
  intervalMs?: number;
  /** A probe slower than this failed (default 800 ms). */
  timeoutMs?: number;
  /** Failures in a row that make a member down (default 2). */
  downAfter?: number;
  /** Told when a member goes down or comes back. */
  onChange?(id: string, down: boolean): void;
}

export class MemberHealth {
  /** Failures in a row per member id. */
  private readonly failures = new Map<string, number>();
  private readonly downSet = new Set<string>();
  private timer: ClockTimer | undefined;
  private stopped = true;

  constructor(private readonly o: HealthOptions) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** Whether the member failed its last probes or calls (never this node: it is not probed). */
  isDown(id: string): boolean {
    return this.downSet.has(id);
  }

  /** Members down now. */
  down(): string[] {
    return [...this.downSet];
  }

  /**
   * A call to the member failed to connect, or a probe failed. `refused`: nothing listens on its
   * port (the process is gone): down at once, there is nothing to wait for.
   */
  failed(id: string, refused = false): void {
    const n = refused ? Number.POSITIVE_INFINITY : (this.failures.get(id) ?? 0) + 1;
    this.failures.set(id, n);
    if (n >= (this.o.downAfter ?? 2) && !this.downSet.has(id)) {
      this.downSet.add(id);
      this.o.onChange?.(id, true);
    }
  }

  /** The member answered a probe. */
  answered(id: string): void {
    this.failures.set(id, 0);
    if (this.downSet.delete(id)) this.o.onChange?.(id, false);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.o.clock.setTimeout(() => this.tick(), this.o.intervalMs ?? 500, { unref: true });
  }

  /**
   * One probe per member, sent whether or not the last one answered yet: a member that stopped
   * answering collects a failure per timeout, not one per several intervals.
   */
  private tick(): void {
    const others = this.o.others();
    const ids = new Set(others.map((m) => m.id));
    for (const id of [...this.failures.keys()]) if (!ids.has(id)) this.forget(id);
    for (const m of others) void this.probe(m);
    this.schedule();
  }

  private forget(id: string): void {
    this.failures.delete(id);
    this.downSet.delete(id);
  }

  private async probe(m: Member, again = false): Promise<void> {
    let ok = false;
    try {
      const res = await this.o.fetch(`${m.url}${PING_PATH}`, {
        signal: AbortSignal.timeout(this.o.timeoutMs ?? 800),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (this.stopped) return;
      ok = res.ok;
      if (ok) this.answered(m.id);
      else this.failed(m.id);
    } catch (err) {
      if (this.stopped) return;
      this.failed(m.id, isRefused(err));
    }
    // The failure in a row that makes it down comes one timeout later, not one interval later.
    if (!ok && !again && !this.downSet.has(m.id) && this.o.others().some((x) => x.id === m.id))
      void this.probe(m, true);
  }
}

/** Whether a fetch failed because the member could not be reached (not a caller's abort). */
export function isUnreachable(err: unknown): boolean {
  return /ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|EPIPE|UND_ERR_SOCKET|UND_ERR_CONNECT_TIMEOUT/.test(
    causeCode(err),
  );
}

/** Whether the member's host answered that nothing listens on its port. */
export function isRefused(err: unknown): boolean {
  return causeCode(err) === 'ECONNREFUSED';
}

function causeCode(err: unknown): string {
  if (!(err instanceof Error) || err.name === 'AbortError' || err.name === 'TimeoutError') return '';
  const cause = (err as Error & { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' ? cause.code : '';
}
