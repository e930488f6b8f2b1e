// The read ends' guarantee (reads/cluster-ends.ts): a read that arrives after a write's
// acknowledgment left waits for ends that hold the write, although reads share refreshes and most
// reads make none. Simulated on a virtual clock: writes land in "Kafka" at random times, their
// acknowledgments leave through AckHold, reads arrive at random times; a refresh reads Kafka's
// end when it is sent. Fails when the hold is shorter than the refreshes' life.
import { describe, expect, it } from 'vitest';
import { AckHold, ClusterEnds, FRESH_MS, KEEP_MS } from '../../../src/cluster/reads/cluster-ends.js';
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
