// Member liveness (src/cluster/membership/health.ts) on a hand-driven clock: a refused connection
// makes a member down at once, timeouts after two in a row (the second probe sent as the first
// failed, without waiting for the next round), an answered probe brings it back, a failed member
// call counts, and a member that left the map is forgotten.
import { describe, expect, it } from 'vitest';
import { MemberHealth, PING_PATH } from '../../../src/cluster/membership/health.js';
import type { Member } from '../../../src/cluster/types.js';
import type { Clock, ClockTimer } from '../../../src/util/clock.js';
import { until } from '../../helpers/until.js';

/** Timers fire only when the test says so. */
class HandClock implements Clock {
  private timers: { fn: () => void; cancelled: boolean }[] = [];
  now = (): number => 0;
  monotonic = (): number => 0;
  setTimeout(fn: () => void): ClockTimer {
    const t = { fn, cancelled: false };
    this.timers.push(t);
    return { cancel: () => (t.cancelled = true) };
  }
  sleep = (): Promise<void> => Promise.resolve();
  /** Fires the timers set so far (one probe round). */
  tick(): void {
    const due = this.timers;
    this.timers = [];
    for (const t of due) if (!t.cancelled) t.fn();
  }
}

type Behaviour = 'answer' | 'refuse' | 'hang';

function setup(members: Member[]) {
  const clock = new HandClock();
  const behaviour = new Map<string, Behaviour>(members.map((m) => [m.url, 'answer']));
  const probes: string[] = [];
  let settled = 0;
  const changes: string[] = [];
  let others = members;
  const health = new MemberHealth({
    others: () => others,
    clock,
    timeoutMs: 5,
    onChange: (id, down) => changes.push(`${id} ${down ? 'down' : 'up'}`),
    fetch: (url, init) => {
      probes.push(url);
      const b = behaviour.get(url.slice(0, -PING_PATH.length));
      const done = <T>(p: Promise<T>): Promise<T> => p.finally(() => settled++);
      if (b === 'answer') return done(Promise.resolve(new Response('{}')));
      if (b === 'refuse')
        return done(Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })));
      // Hangs until the probe's own timeout aborts it, as a stopped process does.
      return done(
        new Promise<Response>((_, reject) =>
          init.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error)),
        ),
      );
    },
  });
  /** One probe round, resolved: every probe sent has answered or failed. */
  const round = async (): Promise<void> => {
    const want = probes.length + others.length;
    clock.tick();
    await until(() => settled >= want, { what: 'the probes of one round' });
  };
  return {
    health,
    behaviour,
    probes,
    changes,
    round,
    setOthers: (m: Member[]) => (others = m),
  };
}

const A = { id: 'a', url: 'http://a' };
const B = { id: 'b', url: 'http://b' };

describe('member health', () => {
  it('refused: down at once; hanging: down after two timeouts in one round; an answer: back up', async () => {
    const t = setup([A, B]);
    t.health.start();
    await t.round();
    expect(t.health.down()).toEqual([]);
    t.behaviour.set(A.url, 'refuse');
    t.behaviour.set(B.url, 'hang');
    const before = t.probes.length;
    await t.round();
    expect(t.health.isDown('a')).toBe(true);
    // No clock tick here: the probe sent when the first one timed out is the second failure.
    await until(() => t.health.isDown('b'), { what: 'b down after its second probe timed out' });
    const sent = t.probes.slice(before);
    expect(sent.filter((u) => u.startsWith(B.url))).toHaveLength(2);
    // A refused member is down at once: it is not probed again before the next round.
    expect(sent.filter((u) => u.startsWith(A.url))).toHaveLength(1);
    t.behaviour.set(A.url, 'answer');
    t.behaviour.set(B.url, 'answer');
    await t.round();
    expect(t.health.down()).toEqual([]);
    expect(t.changes).toEqual(['a down', 'b down', 'a up', 'b up']);
    t.health.stop();
  });

  it('failed member calls count like failed probes; a member out of the map is forgotten', async () => {
    const t = setup([A, B]);
    t.health.failed('a');
    expect(t.health.isDown('a')).toBe(false);
    t.health.failed('a');
    expect(t.health.isDown('a')).toBe(true);
    t.health.failed('b', true);
    expect(t.health.isDown('b')).toBe(true);
    t.setOthers([A]);
    t.behaviour.set(A.url, 'refuse');
    t.health.start();
    await t.round();
    expect(t.health.down()).toEqual(['a']);
    t.health.stop();
  });
});
