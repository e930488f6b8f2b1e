// Read grants (docs/CLUSTER.md, "How a read sees every acknowledged write"): the lease that lets a
// coordinator acknowledge a log write as soon as Kafka has, unless some node's reads may be using
// end offsets read before the write was in Kafka.
//
// A reader (a node whose reads want cached ends, reads/cluster-ends.ts) asks every member of its
// partition map's generation, itself included, for a grant of GRANT_MS while its reads keep coming.
// A granter (every node) records its own now + GRANT_MS for every grant it gives (Granter), and a
// log write it coordinates is held FRESH_MS after Kafka's acknowledgment when some grant it gave
// was unexpired at any moment from that acknowledgment until the answer leaves, or when it was not
// stably a member meanwhile (Granter.mustHold). The reader counts a grant valid until the time it
// SENT the request plus GRANT_MS·(1 − GRANT_MARGIN), keeps a chain per granter (each renewal
// answered before the previous grant's expiry at the reader extends it; a late one starts a new
// chain), and lets a read use a cached refresh only when it holds a valid chain from every member
// and the refresh was sent after the latest chain start (ReadGrants.floor).
//
// Why a read still sees every acknowledged write: a write acknowledged unheld by W, Kafka's
// acknowledgment at time a, met no unexpired grant of W at a. A reader chain from W that covers a
// read arriving at s > a (the answer left at or after a) started after a: had it started before,
// one of its grants would have been valid at the reader at a, that is received before a and valid
// until its request's sending + GRANT_MS·(1 − margin), which is before W's expiry for it (W gave
// it after the request was sent, for a full GRANT_MS; the margin covers the two clocks' rates): W
// had an unexpired grant at a. So the refresh the read uses was sent after the chain start, after
// a: the write is below its ends. Held writes are covered by the FRESH_MS argument as before. A
// member new to the reader's generation gave the reader no grant: it holds every write for
// GRANT_MS after it settled in its generation, and every other member refused grants of the old
// generation from the moment it began rebalancing (before the new member could settle), so the
// reader's old chains end within GRANT_MS of that; a member the group may have dropped (its last
// heartbeat older than half the session timeout) holds and refuses, and is dropped only after the
// whole session timeout, more than GRANT_MS later.
import { jsonBody } from '../../encoding/json-body.js';
import { type Clock, systemClock } from '../../util/clock.js';
import type { Member } from '../types.js';

/** How long a grant lasts at its granter. */
export const GRANT_MS = 2_000;
/** The share of a grant the reader does not count on (the two clocks' rates may differ). */
export const GRANT_MARGIN = 0.1;
/** The members' route that answers a grant (http-routes.ts). */
export const GRANT_PATH = '/internal/cluster/grant';

/** What membership tells the granter about this node's place in the group (Membership.standing). */
export interface Standing {
  /** The generation of the map this node has settled in; undefined while joining or rebalancing. */
  generation: number | undefined;
  /** Monotonic ms when it settled in that generation (the map read after the join). */
  settledAt: number;
  /** Monotonic ms of the last successful heartbeat (or join). */
  heartbeatAt: number;
  /** The latest monotonic ms at which the heartbeat was older than staleMs (-Infinity: never). */
  staleUntil: number;
  /** Beyond this, the group may have dropped the member (half its session timeout). */
  staleMs: number;
}

export class Granter {
  /** The latest expiry of a grant given (monotonic ms here). */
  private expiry = -Infinity;
  given = 0;
  refused = 0;

  constructor(
    private readonly standing: () => Standing,
    private readonly clock: Clock = systemClock,
    readonly grantMs = GRANT_MS,
  ) {}

  /** A reader of `generation` asks for a grant of `ms`: given (true) only while settled in that generation. */
  grant(generation: number, ms: number): boolean {
    const s = this.standing();
    const now = this.clock.monotonic();
    if (s.generation === undefined || s.generation !== generation || now - s.heartbeatAt > s.staleMs) {
      this.refused++;
      return false;
    }
    this.expiry = Math.max(this.expiry, now + Math.min(Math.max(ms, 0), 10 * this.grantMs));
    this.given++;
    return true;
  }

  /** Whether a log write Kafka acknowledged now would be held (GET /cluster). */
  holdsNow(): boolean {
    return this.mustHold(this.clock.monotonic());
  }

  /**
   * Whether a log write whose Kafka acknowledgment came at `ackedAt` must be held FRESH_MS: some
   * grant was unexpired at a moment since then, or this node was not stably a member since then
   * (not settled, within grantMs of settling, heartbeat stale). Call it as the answer leaves.
   */
  mustHold(ackedAt: number): boolean {
    if (this.expiry > ackedAt) return true;
    const s = this.standing();
    const now = this.clock.monotonic();
    if (s.generation === undefined || now - s.heartbeatAt > s.staleMs) return true;
    return s.settledAt + this.grantMs > ackedAt || s.staleUntil > ackedAt;
  }
}

/** The grant route's answer to a request body (JSON `{ generation, ms }`, as bytes): bad ones get none. */
export function answerGrant(granter: Granter, body: unknown): { granted: boolean } {
  let b: unknown;
  try {
    b = jsonBody(body);
  } catch {
    return { granted: false };
  }
  const { generation, ms } = (b ?? {}) as { generation?: unknown; ms?: unknown };
  if (typeof generation !== 'number' || typeof ms !== 'number') return { granted: false };
  return { granted: granter.grant(generation, ms) };
}

/** A reader's grants from one member: the chain's start (received) and its expiry here. */
interface Chain {
  start: number;
  until: number;
}

export interface ReadGrantsParts {
  /** The reader's map now: its generation and members (this node among them). */
  map(): { generation: number; members: readonly Member[] } | undefined;
  self(): Member;
  /** Asks a member (this node: its own Granter) for a grant of `ms` for `generation`. */
  ask(member: Member, generation: number, ms: number): Promise<boolean>;
  clock?: Clock;
  grantMs?: number;
  /** How long after the last read grants are still renewed. */
  keepMs: number;
}

export class ReadGrants {
  private generation: number | undefined;
  private readonly chains = new Map<string, Chain>();
  private lastAsked = -Infinity;
  private renewing = false;
  /** Grant requests sent, and answered yes. */
  asked = 0;
  granted = 0;

  constructor(private readonly parts: ReadGrantsParts) {}

  private get clock(): Clock {
    return this.parts.clock ?? systemClock;
  }

  private get grantMs(): number {
    return this.parts.grantMs ?? GRANT_MS;
  }

  /**
   * A read comes now: grants are (kept) asked for. Answers the time after which a refresh must
   * have been sent for the read to use it (the latest chain start), or undefined when this node
   * does not hold a valid grant from every member of its generation now.
   */
  floor(): number | undefined {
    const now = this.clock.monotonic();
    this.lastAsked = now;
    this.renew();
    const m = this.parts.map();
    if (m === undefined) return undefined;
    if (m.generation !== this.generation) {
      // A new map: its members are asked now, not at the next renewal.
      this.askAll();
      return undefined;
    }
    if (!m.members.some((x) => x.id === this.parts.self().id)) return undefined;
    let latest = -Infinity;
    for (const member of m.members) {
      const c = this.chains.get(member.id);
      if (c === undefined || c.until <= now) return undefined;
      latest = Math.max(latest, c.start);
    }
    return latest;
  }

  /** Chains valid now (GET /cluster). */
  holding(): number {
    const now = this.clock.monotonic();
    let n = 0;
    for (const c of this.chains.values()) if (c.until > now) n++;
    return n;
  }

  /** Every grantMs/3 while reads came within keepMs: every member asked again. */
  private renew(): void {
    if (this.renewing) return;
    this.renewing = true;
    const tick = (): void => {
      if (this.clock.monotonic() - this.lastAsked > this.parts.keepMs) {
        this.renewing = false;
        return;
      }
      this.askAll();
      this.clock.setTimeout(tick, Math.floor(this.grantMs / 3), { unref: true });
    };
    tick();
  }

  private askAll(): void {
    const m = this.parts.map();
    if (m === undefined) return;
    if (m.generation !== this.generation) {
      // Another generation: its members may differ, so no chain of the old one counts.
      this.chains.clear();
      this.generation = m.generation;
    }
    const ms = this.grantMs;
    for (const member of m.members) {
      const sentAt = this.clock.monotonic();
      this.asked++;
      this.parts.ask(member, m.generation, ms).then(
        (yes) => {
          if (yes) this.received(member.id, m.generation, sentAt, ms);
        },
        () => undefined,
      );
    }
  }

  /** A grant asked at `sentAt` arrived: it extends the member's chain, or starts a new one. */
  private received(id: string, generation: number, sentAt: number, ms: number): void {
    if (generation !== this.generation) return;
    this.granted++;
    const now = this.clock.monotonic();
    const until = sentAt + ms * (1 - GRANT_MARGIN);
    const c = this.chains.get(id);
    if (c !== undefined && now < c.until) c.until = Math.max(c.until, until);
    else this.chains.set(id, { start: now, until });
  }
}
