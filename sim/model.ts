// What the simulator knows about every write it sent, and the checks against what the engine
// shows. Each client owns its cells (the bits of its row in field f, the fields it creates) and
// sends one request at a time, so the state of a client's cells is always some prefix of its
// requests, each applied whole. A read or a restart must show such a prefix, and one that holds
// every request acknowledged (or seen by an earlier read) before it began:
// - a shorter prefix: an acknowledged write is missing, or a read saw a write that was lost;
// - no prefix at all: a request is partly applied (or something wrote cells nobody asked for).

/** A cell: `b<column>` (the client's bit in field f) or `F<name>` (a field of the client exists). */
export type Cell = string;

export type ReqState = 'pending' | 'acked' | 'unknown';

export interface Req {
  readonly id: number;
  readonly client: number;
  readonly label: string;
  /** Cell → value once the request is applied. */
  readonly cells: ReadonlyMap<Cell, number>;
  state: ReqState;
  /** Must survive: acknowledged, or seen by a read. */
  durable: boolean;
  /** Event counter when it was acknowledged. */
  ackedAt: number;
}

const everyCell = (): boolean => true;

export class Violation extends Error {
  override name = 'Violation';
}

export class ClientModel {
  /** Requests that may be applied, in the order sent (refused and lost ones are dropped). */
  private list: Req[] = [];
  private cellCache: Set<Cell> | undefined;
  private expectedCache: Map<Cell, number> | undefined;

  constructor(readonly client: number) {}

  get reqs(): readonly Req[] {
    return this.list;
  }

  /** A request sent (it may be applied from now on). */
  add(req: Req): void {
    this.list.push(req);
    this.cellCache = undefined;
    this.expectedCache = undefined;
  }

  /** A request refused: it is not applied. */
  drop(req: Req): void {
    this.list = this.list.filter((r) => r !== req);
    this.cellCache = undefined;
    this.expectedCache = undefined;
  }

  /** Every cell the client's requests touch (read back to compare). */
  cells(): Set<Cell> {
    if (this.cellCache === undefined) {
      this.cellCache = new Set<Cell>();
      for (const r of this.list) for (const c of r.cells.keys()) this.cellCache.add(c);
    }
    return this.cellCache;
  }

  /** The state after every request of the list (what the client believes it wrote). */
  expected(): ReadonlyMap<Cell, number> {
    if (this.expectedCache === undefined) {
      this.expectedCache = new Map<Cell, number>();
      for (const r of this.list) for (const [c, v] of r.cells) this.expectedCache.set(c, v);
    }
    return this.expectedCache;
  }

  /** The least count of leading requests that a view starting at event `since` must hold. */
  mustHold(since: number): number {
    let k = 0;
    this.reqs.forEach((r, i) => {
      if (r.durable && r.ackedAt < since) k = i + 1;
    });
    return k;
  }

  /**
   * The prefix length k (k >= must) whose state equals `seen` (cells not in `seen` are 0); throws
   * a Violation when none does. `seen` must only name cells of this client.
   */
  matchPrefix(
    seen: ReadonlyMap<Cell, number>,
    must: number,
    what: string,
    only: (c: Cell) => boolean = everyCell,
  ): number {
    const running = new Map<Cell, number>();
    let all = this.cells();
    if (only !== everyCell) all = new Set([...all].filter(only));
    for (const c of seen.keys())
      if (!all.has(c)) throw new Violation(`${what}: client ${this.client} shows ${c}, which no request wrote`);
    let mismatches = 0;
    for (const c of all) if ((seen.get(c) ?? 0) !== 0) mismatches++;
    let firstMatch = -1;
    for (let k = 0; ; k++) {
      if (mismatches === 0) {
        if (k >= must) return k;
        if (firstMatch < 0) firstMatch = k;
      }
      if (k === this.reqs.length) break;
      for (const [c, v] of this.reqs[k].cells) {
        if (!only(c)) continue;
        const before = running.get(c) ?? 0;
        const want = seen.get(c) ?? 0;
        if (before === v) continue;
        if (before === want) mismatches++;
        else if (v === want) mismatches--;
        running.set(c, v);
      }
    }
    if (firstMatch >= 0) {
      const r = this.reqs[firstMatch];
      throw new Violation(
        `${what}: client ${this.client} holds only its first ${firstMatch} requests; request #${r.id} (${r.label}, ${r.state}${r.durable ? ', acknowledged or seen' : ''}) is missing`,
      );
    }
    throw new Violation(
      `${what}: client ${this.client}'s cells match no prefix of its requests: a request is partly applied`,
    );
  }

  /** A read showed the first k requests: they must survive from now on. */
  observed(k: number, at: number): void {
    for (const r of this.reqs.slice(0, k))
      if (!r.durable) {
        r.durable = true;
        r.ackedAt = Math.min(r.ackedAt, at);
      }
  }

  /** After a restart showed the first k: the rest are lost (none may be durable). */
  recovered(k: number, what: string, at: number): void {
    for (const r of this.reqs.slice(k))
      if (r.durable)
        throw new Violation(
          `${what}: request #${r.id} (${r.label}) of client ${this.client} was acknowledged or seen, and is lost`,
        );
    this.list = this.list.slice(0, k);
    this.cellCache = undefined;
    this.expectedCache = undefined;
    for (const r of this.list) {
      if (!r.durable) r.ackedAt = at;
      r.durable = true;
      r.state = 'acked';
    }
  }
}
