// The end offsets a read waits for, without a Kafka round trip per read (docs/CLUSTER.md, "Reads:
// how a read sees every acknowledged write"). A read that arrived at time s may use the ends of a
// refresh (ListOffsets of NAME.meta and NAME.log, read committed) that was sent after
// s − FRESH_MS, and, for log writes, after the start of the read grants this node holds from
// every member (membership/grants.ts): every coordinator holds a meta write's acknowledgment
// until FRESH_MS after Kafka acknowledged it, and a log write's while it has granted reads (or is
// not stably a member) (AckHold). A write acknowledged before the read arrived was then in Kafka
// at least FRESH_MS before s, or before the grants began: before any refresh the read may use was
// sent, so it is below those ends. Without grants from every member, a read waits for a refresh
// sent after it arrived.
// Refreshes are shared, and kept young ahead of the reads: while requests keep asking (within
// KEEP_MS of the last one), a refresh is started every freshMs/2 in the background, so a read
// finds ends young enough without a Kafka round trip of its own even at one connection (one
// request at a time would otherwise wait for a refresh nearly every time: they come less than
// freshMs apart only under load). A read that finds none young enough waits for the next (one in
// flight serves every read that arrived before it was sent). Idle, no refresh is sent.
import { type Clock, systemClock } from '../../util/clock.js';

/** How long a refresh serves reads, and how long every write's acknowledgment is held back. */
export const FRESH_MS = 10;
/** How long after the last request refreshes are still kept young in the background. */
export const KEEP_MS = 1_000;
/** Background refreshes in flight at most (a slow broker must not pile them up). */
const KEEP_IN_FLIGHT = 2;

export interface Ends {
  /** Monotonic time (ms) at which the refresh was started (its requests go out after it). */
  sentAt: number;
  meta: string;
  log: ReadonlyMap<number, string>;
}

/**
 * The reader's grants (membership/grants.ts ReadGrants): asked (and kept) as reads come; the time
 * after which a refresh must have been sent to serve a read now, or undefined without a valid
 * grant from every member.
 */
export interface GrantFloor {
  floor(): number | undefined;
}

export interface EndsSource {
  /** partition → read-committed end offset of `topic`, from requests sent after this call. */
  of(topic: string): Promise<Map<number, string>>;
  /** The same for several topics in one round (end-offsets.ts), when the source can. */
  ofAll?(topics: readonly string[]): Promise<Map<string, Map<number, string>>>;
}

export class ClusterEnds {
  private newest: Ends | undefined;
  /** Refreshes under way, by the time they were started. */
  private readonly running = new Map<number, Promise<Ends>>();
  /** The newest meta-only refresh (forMeta) and those under way, by the time they were started. */
  private newestMeta: { sentAt: number; meta: string } | undefined;
  private readonly runningMeta = new Map<number, Promise<string>>();
  /** Refreshes started (each: one end-offsets fetch per topic, ListOffsets requests to the broker). */
  refreshes = 0;
  /** Refreshes a request had to wait for (none young enough was done): the rest ran ahead of them. */
  waited = 0;
  /** Monotonic time of the last request; the keeper runs while it is within KEEP_MS. */
  private lastAsked = -Infinity;
  private keeping = false;
  /** Reads that found no grant from every member, so waited for a refresh sent after they arrived. */
  ungranted = 0;

  constructor(
    private readonly source: EndsSource,
    private readonly topics: { meta: string; log: string },
    private readonly clock: Clock = systemClock,
    readonly freshMs = FRESH_MS,
    /**
     * Read grants: without them every write is taken to be held (AckHold without a Granter), and a
     * refresh sent after arrived − freshMs serves.
     */
    private readonly grants?: GrantFloor,
  ) {}

  /** Now, on the clock that `arrived` and AckHold use. */
  now(): number {
    return this.clock.monotonic();
  }

  /** Ends that hold every write acknowledged anywhere before `arrived` (monotonic ms). */
  forRead(arrived: number): Promise<Ends> {
    this.lastAsked = this.now();
    this.keep();
    const oldest = this.oldestFor(arrived);
    const n = this.newest;
    // Strictly after: a refresh sent at the very instant a write's hold began may predate it.
    if (n !== undefined && n.sentAt > oldest) return Promise.resolve(n);
    this.waited++;
    for (const [sentAt, p] of this.running) if (sentAt > oldest) return p;
    return this.refresh();
  }

  /**
   * A refresh serving a read that arrived at `arrived` must be sent after this: arrived − freshMs
   * (every meta write's acknowledgment is held freshMs, and a log write's while this node holds
   * grants), and after the latest start of this node's grant chains; without a valid grant from
   * every member (log writes may leave unheld), after the read arrived (strictly: one stamped
   * with the very same time may have been sent before it).
   */
  private oldestFor(arrived: number): number {
    if (this.grants === undefined) return arrived - this.freshMs;
    const floor = this.grants.floor();
    if (floor !== undefined) return Math.max(arrived - this.freshMs, floor);
    this.ungranted++;
    return arrived;
  }

  /**
   * The end of the meta topic holding every schema and key change acknowledged anywhere before
   * `arrived` (a write's wait for meta, ClusterWrites.caughtUpMeta), by the rule forRead follows:
   * from any refresh sent after arrived − freshMs, a read's or a write's. Without one done or
   * under way, a refresh of the meta topic alone: its one partition's ListOffsets answers in half
   * the time of the meta and log topics' together (0.46 against 0.91 ms median, one broker on
   * this machine). It leaves the background keeper alone: while imports came one at a time, the
   * keeper's 2/freshMs ListOffsets rounds a second cost the nodes and the broker more CPU than
   * the imports.
   */
  forMeta(arrived: number): Promise<string> {
    const oldest = arrived - this.freshMs;
    const n = this.newest;
    if (n !== undefined && n.sentAt > oldest) return Promise.resolve(n.meta);
    const m = this.newestMeta;
    if (m !== undefined && m.sentAt > oldest) return Promise.resolve(m.meta);
    this.waited++;
    for (const [sentAt, p] of this.running) if (sentAt > oldest) return p.then((e) => e.meta);
    for (const [sentAt, p] of this.runningMeta) if (sentAt > oldest) return p;
    return this.refreshMeta();
  }

  private refreshMeta(): Promise<string> {
    const sentAt = this.now();
    const meta = this.endsOf([this.topics.meta]).then(([byPartition]) => {
      const end = byPartition.get(0) ?? '0';
      if (this.newestMeta === undefined || this.newestMeta.sentAt < sentAt) this.newestMeta = { sentAt, meta: end };
      return end;
    });
    return this.underWay(this.runningMeta, sentAt, meta);
  }

  /**
   * The background keeper: while requests came within KEEP_MS, a refresh is started whenever the
   * youngest one (done or in flight) is freshMs/2 old, so the newest done one is rarely older than
   * freshMs when a request arrives. Its failures are the next request's own (it refreshes itself).
   */
  private keep(): void {
    if (this.keeping) return;
    this.keeping = true;
    const tick = (): void => {
      const now = this.now();
      if (now - this.lastAsked > KEEP_MS) {
        this.keeping = false;
        return;
      }
      const youngest = Math.max(this.newest?.sentAt ?? -Infinity, this.youngestRunning());
      if (now - youngest >= this.freshMs / 2 && this.running.size < KEEP_IN_FLIGHT)
        this.refresh().catch(() => undefined);
      this.clock.setTimeout(tick, Math.max(1, Math.floor(this.freshMs / 4)), { unref: true });
    };
    tick();
  }

  private youngestRunning(): number {
    let out = -Infinity;
    for (const sentAt of this.running.keys()) out = Math.max(out, sentAt);
    return out;
  }

  private refresh(): Promise<Ends> {
    const sentAt = this.now();
    const ends = this.endsOf([this.topics.meta, this.topics.log]).then(([meta, log]): Ends => {
      const e = { sentAt, meta: meta.get(0) ?? '0', log };
      if (this.newest === undefined || this.newest.sentAt < sentAt) this.newest = e;
      return e;
    });
    return this.underWay(this.running, sentAt, ends);
  }

  /** Each topic's partition → end offset, in the topics' order: one round when the source can (ofAll). */
  private endsOf(topics: readonly string[]): Promise<Map<number, string>[]> {
    if (this.source.ofAll === undefined) return Promise.all(topics.map((t) => this.source.of(t)));
    return this.source.ofAll(topics).then((all) => topics.map((t) => all.get(t) ?? new Map<number, string>()));
  }

  /** A refresh sent at `sentAt`: counted, and listed in `running` (for requests to share) until it settles. */
  private underWay<T>(running: Map<number, Promise<T>>, sentAt: number, refresh: Promise<T>): Promise<T> {
    this.refreshes++;
    const p = refresh.finally(() => running.delete(sentAt));
    running.set(sentAt, p);
    return p;
  }
}

/** When a log write must be held (membership/grants.ts Granter). */
export interface HoldRule {
  /** Whether a log write Kafka acknowledged at `ackedAt` must be held (asked as its answer leaves). */
  mustHold(ackedAt: number): boolean;
}

/**
 * The writer's side: an acknowledgment leaves FRESH_MS after Kafka acknowledged the write, so a
 * read that arrives after it never uses ends read before the write was in Kafka. A meta write is
 * always held; a log write sent as one message (no transaction) only when the rule says so (this
 * node granted reads, or is not stably a member: membership/grants.ts), and always without one.
 * A transaction's is always held: Kafka acknowledges its commit before the markers that move the
 * read-committed end are written, and the hold covers their delay.
 */
export class AckHold {
  /** Log acknowledgments held, and let go at once (GET /cluster). */
  held = 0;
  unheld = 0;

  constructor(
    private readonly clock: Clock = systemClock,
    readonly ms = FRESH_MS,
    private readonly rule?: HoldRule,
  ) {}

  /** Call when Kafka has acknowledged; resolves once the acknowledgment may leave. */
  since(ackedAt: number): Promise<void> {
    const left = ackedAt + this.ms - this.clock.monotonic();
    return left <= 0 ? Promise.resolve() : this.clock.sleep(Math.ceil(left));
  }

  /**
   * A log write Kafka acknowledged at `ackedAt`, `work` (its results) running meanwhile: resolves
   * with work's value once the acknowledgment may leave. `single`: it went as one message, not a
   * transaction. The rule is asked at the acknowledgment (so the hold runs beside work) and again
   * as the answer leaves (a grant given meanwhile holds it too).
   */
  async logAfter<T>(ackedAt: number, single: boolean, work: Promise<T>): Promise<T> {
    const must = (): boolean => !single || this.rule === undefined || this.rule.mustHold(ackedAt);
    const early = must() ? this.since(ackedAt) : undefined;
    const out = await work;
    if (early !== undefined) await early;
    else if (must()) await this.since(ackedAt);
    else {
      this.unheld++;
      return out;
    }
    this.held++;
    return out;
  }

  now(): number {
    return this.clock.monotonic();
  }
}
