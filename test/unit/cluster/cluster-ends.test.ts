// The read ends' guarantee (reads/cluster-ends.ts): a read that arrives after a write's
// acknowledgment left waits for ends that hold the write, although reads share refreshes and most
// reads make none. Simulated on a virtual clock: writes land in "Kafka" at random times, their
// acknowledgments leave through AckHold, reads arrive at random times; a refresh reads Kafka's
// end when it is sent. Fails when the hold is shorter than the refreshes' life.
import { describe, expect, it } from 'vitest';
import { AckHold, ClusterEnds, FRESH_MS, KEEP_MS } from '../../../src/cluster/reads/cluster-ends.js';
import { Granter, ReadGrants, type Standing } from '../../../src/cluster/membership/grants.js';
import type { Clock, ClockTimer } from '../../../src/util/clock.js';
import { seededRandom } from '../../helpers/seeded.js';

class VirtualClock implements Clock {
  private t = 0;
  private timers: { at: number; fn: () => void }[] = [];
  now(): number {
    return this.t;
  }
  monotonic(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): ClockTimer {
    const timer = { at: this.t + ms, fn };
    this.timers.push(timer);
    return { cancel: () => (this.timers = this.timers.filter((x) => x !== timer)) };
  }
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, ms));
  }
  /** Moves time on by 1 ms steps, firing due timers and letting promises settle between. */
  async advance(ms: number): Promise<void> {
    for (let i = 0; i < ms; i++) {
      this.t++;
      const due = this.timers.filter((x) => x.at <= this.t);
      this.timers = this.timers.filter((x) => x.at > this.t);
      for (const d of due) d.fn();
      for (let k = 0; k < 5; k++) await Promise.resolve();
    }
  }
}

/**
 * Runs the simulation; returns the requests that missed an acknowledged write, and refreshes per
 * request. Writes go to the log or the meta topic; reads check the ends (forRead), writes' waits
 * for meta the meta topic's (forMeta), sharing one ClusterEnds when both come.
 */
async function simulate(
  holdMs: number,
  seed: number,
  /** Which requests arrive: reads, writes waiting for meta, or both. */
  asks: 'reads' | 'metas' | 'both' = 'both',
): Promise<{ stale: number; reads: number; refreshes: number }> {
  const clock = new VirtualClock();
  const rnd = seededRandom(seed);
  const kafkaEnd = { m: 0, l: 0 };
  const acknowledged = { m: 0, l: 0 };
  // A refresh answers Kafka's end as of its sending, 1–3 ms later.
  const source = {
    of: (topic: string): Promise<Map<number, string>> => {
      const end = topic === 'm' ? kafkaEnd.m : kafkaEnd.l;
      return clock.sleep(1 + Math.floor(rnd() * 3)).then(() => new Map([[0, String(end)]]));
    },
  };
  const ends = new ClusterEnds(source, { meta: 'm', log: 'l' }, clock);
  const hold = new AckHold(clock, holdMs);
  let stale = 0;
  let reads = 0;
  const pending: Promise<void>[] = [];
  for (let step = 0; step < 3000; step++) {
    const r = rnd();
    if (r < 0.2) {
      const topic = rnd() < 0.5 ? 'm' : 'l';
      const offset = ++kafkaEnd[topic];
      pending.push(
        hold.since(clock.monotonic()).then(() => {
          acknowledged[topic] = Math.max(acknowledged[topic], offset);
        }),
      );
    } else if (r < 0.6) {
      const mustSee = { ...acknowledged };
      reads++;
      const read = asks === 'both' ? rnd() < 0.5 : asks === 'reads';
      const seen = read
        ? ends.forRead(clock.monotonic()).then((e) => Number(e.log.get(0)) >= mustSee.l && Number(e.meta) >= mustSee.m)
        : ends.forMeta(clock.monotonic()).then((meta) => Number(meta) >= mustSee.m);
      pending.push(
        seen.then((ok) => {
          if (!ok) stale++;
        }),
      );
    }
    await clock.advance(Math.floor(rnd() * 3));
  }
  await clock.advance(100);
  await Promise.all(pending);
  return { stale, reads, refreshes: ends.refreshes };
}

describe('ClusterEnds', () => {
  it("a read (and a write's wait for meta) sees every write acknowledged before it arrived, with far fewer refreshes than requests", async () => {
    for (const seed of [1, 2, 3]) {
      const { stale, reads, refreshes } = await simulate(FRESH_MS, seed);
      expect(stale).toBe(0);
      expect(refreshes / reads).toBeLessThan(0.5);
      // Waits for meta alone (no read keeps refreshes young): meta-only refreshes, shared.
      const metas = await simulate(FRESH_MS, seed, 'metas');
      expect(metas.stale).toBe(0);
      expect(metas.refreshes / metas.reads).toBeLessThan(0.5);
    }
  });

  it('without the hold, reads miss acknowledged writes (the simulation can fail)', async () => {
    const { stale } = await simulate(0, 1);
    expect(stale).toBeGreaterThan(0);
    expect((await simulate(0, 1, 'metas')).stale).toBeGreaterThan(0);
  });
});

/** A source that counts its requests, each answered 2 ms later; and a way to wait for one read. */
function counted(clock: VirtualClock): { ends: () => ClusterEnds; sent: () => number } {
  let sent = 0;
  const source = {
    of: (): Promise<Map<number, string>> => {
      sent++;
      return clock.sleep(2).then(() => new Map([[0, '0']]));
    },
  };
  return { ends: () => new ClusterEnds(source, { meta: 'm', log: 'l' }, clock), sent: () => sent };
}

async function settle(clock: VirtualClock, p: Promise<unknown>): Promise<void> {
  let done = false;
  void p.then(() => (done = true));
  while (!done) await clock.advance(1);
}

describe('ClusterEnds keeper', () => {
  it('one request at a time rarely waits for a refresh, and an idle node sends none', async () => {
    const clock = new VirtualClock();
    const c = counted(clock);
    const ends = c.ends();
    for (let i = 0; i < 200; i++) {
      // One connection: the next request comes once the last answered, 4 ms of work later.
      await settle(clock, ends.forRead(clock.monotonic()));
      await clock.advance(4);
    }
    expect(ends.waited / 200).toBeLessThan(0.05);
    await clock.advance(2 * KEEP_MS);
    const quiet = c.sent();
    await clock.advance(2 * KEEP_MS);
    expect(c.sent()).toBe(quiet);
  });

  it("a write's wait for meta takes a read's refresh young enough, and shares one under way", async () => {
    const clock = new VirtualClock();
    const c = counted(clock);
    const ends = c.ends();
    await settle(clock, ends.forRead(clock.monotonic()));
    const afterRead = c.sent();
    // A read's refresh (two topics) just done: no request of its own.
    await settle(clock, ends.forMeta(clock.monotonic()));
    expect(c.sent()).toBe(afterRead);
    await clock.advance(2 * KEEP_MS);
    // None young: one meta refresh serves two waits that arrive while it is under way.
    const before = c.sent();
    const first = ends.forMeta(clock.monotonic());
    await clock.advance(1);
    const second = ends.forMeta(clock.monotonic());
    await settle(clock, Promise.all([first, second]));
    expect(c.sent()).toBe(before + 1);
  });

  it('a write waiting for meta starts no background refreshes: one refresh of the meta topic per write at most', async () => {
    const clock = new VirtualClock();
    const c = counted(clock);
    const writes = c.ends();
    for (let i = 0; i < 20; i++) {
      // Writes one at a time, 50 ms apart (an import's time): each takes one refresh of its own.
      await settle(clock, writes.forMeta(clock.monotonic()));
      await clock.advance(50);
    }
    // The meta topic alone: 1 request each.
    expect(c.sent()).toBe(20);
    // The same requests as reads keep refreshes young all along: many more.
    const reads = c.ends();
    for (let i = 0; i < 20; i++) {
      void reads.forRead(clock.monotonic());
      await clock.advance(52);
    }
    expect(c.sent() - 20).toBeGreaterThan(4 * 2 * 20);
  });
});

// Read grants (membership/grants.ts): several nodes on one virtual clock, each a granter, a reader
// and a coordinator of log writes. Nodes read in spells with idle ones between (their grants lapse,
// and writers then answer without the hold); grant answers take 0–3 ms, now and then longer than a
// grant's life at the reader (its chain restarts); in some runs new members join while the old
// generation's grants are valid (the members learn of the rebalance first, then settle at random
// moments; the new one writes from before it is settled). A read must see every log write whose
// acknowledgment left before it arrived.
const GRANT = 40;
const GRANT_KEEP = 20;

interface SimNode {
  standing: { generation: number | undefined; settledAt: number };
  granter: Granter;
  grants: ReadGrants;
  ends: ClusterEnds;
  hold: AckHold;
  reading: boolean;
}

interface GrantRun {
  stale: number;
  reads: number;
  /** Reads that held grants from every member (the fast path's condition). */
  granted: number;
  held: number;
  unheld: number;
  refused: number;
}

type SimMap = { generation: number; members: readonly { id: string; url: string }[] };

async function simulateGrants(seed: number, opts: { joins?: number; lateAnswers?: number } = {}): Promise<GrantRun> {
  const clock = new VirtualClock();
  const rnd = seededRandom(seed);
  let kafkaEnd = 0;
  let acknowledged = 0;
  const source = {
    of: (): Promise<Map<number, string>> => {
      const end = kafkaEnd;
      return clock.sleep(1 + Math.floor(rnd() * 3)).then(() => new Map([[0, String(end)]]));
    },
  };
  let generation = 1;
  const nodes = new Map<string, SimNode>();
  const maps = new Map<string, SimMap>();
  const make = (id: string, settled: boolean): SimNode => {
    const standing = { generation: settled ? generation : undefined, settledAt: settled ? -Infinity : Infinity };
    const full = (): Standing => ({ ...standing, heartbeatAt: clock.monotonic(), staleUntil: -Infinity, staleMs: 1e9 });
    const granter = new Granter(full, clock, GRANT);
    const grants = new ReadGrants({
      map: () => maps.get(id),
      self: () => ({ id, url: id }),
      ask: (m, g, ms) => {
        const late = rnd() < (opts.lateAnswers ?? 0);
        const delay = late ? GRANT + Math.floor(rnd() * GRANT) : Math.floor(rnd() * 4);
        // The granter decides when the request reaches it, half way; the reader learns it after.
        return clock.sleep(Math.floor(delay / 2)).then(() => {
          const yes = nodes.get(m.id)?.granter.grant(g, ms) ?? false;
          return clock.sleep(Math.ceil(delay / 2)).then(() => yes);
        });
      },
      clock,
      grantMs: GRANT,
      keepMs: GRANT_KEEP,
    });
    const node: SimNode = {
      standing,
      granter,
      grants,
      ends: new ClusterEnds(source, { meta: 'm', log: 'l' }, clock, FRESH_MS, grants),
      hold: new AckHold(clock, FRESH_MS, granter),
      reading: false,
    };
    nodes.set(id, node);
    return node;
  };
  for (const id of ['a', 'b', 'c']) make(id, true);
  const first = [...nodes.keys()].map((id) => ({ id, url: id }));
  for (const id of nodes.keys()) maps.set(id, { generation, members: first });
  // Joins, each 100 ms after every member began to read (their chains are valid when it comes).
  const joins = Array.from({ length: opts.joins ?? 0 }, (_, i) => 1000 + i * 2000 + Math.floor(rnd() * 500));
  let stale = 0;
  let reads = 0;
  let granted = 0;
  const pending: Promise<void>[] = [];
  while (clock.monotonic() < 8000) {
    const now = clock.monotonic();
    if (joins.length > 0 && now >= joins[0] - 100) for (const n of nodes.values()) n.reading = true;
    if (joins.length > 0 && now >= joins[0]) {
      joins.shift();
      join(`n${nodes.size}`);
    }
    // Spells of reading (about 40 ms) and of idling (about 130 ms: longer than a grant lasts).
    for (const n of nodes.values()) if (rnd() < (n.reading ? 0.025 : 0.0075)) n.reading = !n.reading;
    const r = rnd();
    const all = [...nodes.values()];
    const at = all[Math.floor(rnd() * all.length)];
    if (r < 0.3) {
      const offset = ++kafkaEnd;
      // The results' fetch runs beside the hold (logResults); an import without results has none (log).
      const work = rnd() < 0.5 ? Promise.resolve() : clock.sleep(Math.floor(rnd() * 3));
      pending.push(
        at.hold.logAfter(clock.monotonic(), true, work).then(() => {
          acknowledged = Math.max(acknowledged, offset);
        }),
      );
    } else if (r < 0.7 && at.reading) {
      const mustSee = acknowledged;
      reads++;
      if (at.grants.floor() !== undefined) granted++;
      pending.push(
        at.ends.forRead(clock.monotonic()).then((e) => {
          if (Number(e.log.get(0)) < mustSee) stale++;
        }),
      );
    }
    await clock.advance(Math.floor(rnd() * 3));
  }
  await clock.advance(200);
  await Promise.all(pending);
  const sum = (f: (n: SimNode) => number): number => [...nodes.values()].reduce((t, n) => t + f(n), 0);
  return {
    stale,
    reads,
    granted,
    held: sum((n) => n.hold.held),
    unheld: sum((n) => n.hold.unheld),
    refused: sum((n) => n.granter.refused),
  };

  /** The group rebalances: every member learns it (refuses grants) before the new one settles. */
  function join(id: string): void {
    const next = generation + 1;
    for (const n of nodes.values()) n.standing.generation = undefined;
    const d = make(id, false);
    const members = [...nodes.keys()].map((x) => ({ id: x, url: x }));
    for (const [nid, n] of nodes) {
      const settle = n === d ? 5 + Math.floor(rnd() * 5) : 5 + Math.floor(rnd() * 4 * GRANT);
      void clock.sleep(settle).then(() => {
        n.standing.generation = next;
        n.standing.settledAt = clock.monotonic();
        maps.set(nid, { generation: next, members });
      });
    }
    generation = next;
  }
}

describe('read grants', () => {
  it('reads see every acknowledged log write; writers hold only while they have granted, and reads mostly hold grants', async () => {
    for (const seed of [1, 2, 3]) {
      const run = await simulateGrants(seed);
      expect(run.stale).toBe(0);
      // Both paths ran: writes let go at once while nobody read, held while somebody did.
      expect(run.unheld).toBeGreaterThan(50);
      expect(run.held).toBeGreaterThan(50);
      expect(run.granted / run.reads).toBeGreaterThan(0.5);
    }
  });

  it('a reader whose renewal comes late restarts its chain, and still sees every write', async () => {
    for (const seed of [4, 5, 6]) {
      const run = await simulateGrants(seed, { lateAnswers: 0.2 });
      expect(run.stale).toBe(0);
      expect(run.granted).toBeGreaterThan(0);
    }
  });

  it("members joining while the old generation's grants are valid: reads still see their writes", async () => {
    for (const seed of [7, 8, 9]) {
      const run = await simulateGrants(seed, { joins: 3, lateAnswers: 0.05 });
      expect(run.stale).toBe(0);
      expect(run.refused).toBeGreaterThan(0);
      expect(run.unheld).toBeGreaterThan(0);
    }
  });

  it('a granter gives grants only in its own settled generation, and holds while one is unexpired or it settled lately', async () => {
    const clock = new VirtualClock();
    const standing = {
      generation: 3 as number | undefined,
      settledAt: 0,
      heartbeatAt: 0,
      staleUntil: -Infinity,
      staleMs: 3000,
    };
    const g = new Granter(() => standing, clock, 100);
    await clock.advance(200);
    expect(g.mustHold(clock.monotonic())).toBe(false);
    // A reader of another generation (older or newer) gets none.
    expect(g.grant(2, 100)).toBe(false);
    expect(g.grant(4, 100)).toBe(false);
    expect(g.grant(3, 100)).toBe(true);
    expect(g.mustHold(clock.monotonic())).toBe(true);
    await clock.advance(100);
    // The grant expires now: a write acknowledged from here is not held...
    expect(g.mustHold(clock.monotonic())).toBe(false);
    // ... but one acknowledged while it ran is, though asked later.
    expect(g.mustHold(250)).toBe(true);
    // Rebalancing: refused, held.
    standing.generation = undefined;
    expect(g.grant(3, 100)).toBe(false);
    expect(g.mustHold(clock.monotonic())).toBe(true);
    // Settled in a new generation: held for a grant's length after.
    standing.generation = 4;
    standing.settledAt = clock.monotonic();
    standing.heartbeatAt = clock.monotonic();
    expect(g.mustHold(clock.monotonic())).toBe(true);
    await clock.advance(101);
    expect(g.mustHold(clock.monotonic())).toBe(false);
    // A heartbeat older than half the session: held, refused.
    await clock.advance(3000);
    expect(g.mustHold(clock.monotonic())).toBe(true);
    expect(g.grant(4, 100)).toBe(false);
  });
});
