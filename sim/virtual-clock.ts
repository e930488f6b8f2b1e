// A virtual clock for the simulator: time moves only when the driver fires the next timer, so
// the engine's commit times, durations and timers depend on the seed, never on the machine.
// Timers belong to a scope; a crash cancels its node's scope (a killed process's timers die
// with it).
import type { Clock, ClockTimer } from '../src/util/clock.js';

interface Timer {
  readonly due: number;
  readonly order: number;
  readonly fn: () => void;
  readonly scope: number;
  cancelled: boolean;
}

/** 2026-01-01T00:00:00Z: virtual wall-clock time starts here. */
const EPOCH_MS = Date.UTC(2026, 0, 1);

export class VirtualClock {
  private nowMs = 0;
  private order = 0;
  private timers: Timer[] = [];
  private dead = new Set<number>();

  get elapsed(): number {
    return this.nowMs;
  }

  /** A Clock whose timers belong to `scope` (cancel them all with kill(scope)). */
  scoped(scope: number): Clock {
    return {
      now: () => EPOCH_MS + this.nowMs,
      monotonic: () => this.nowMs,
      setTimeout: (fn, ms) => this.add(fn, ms, scope),
      sleep: (ms) => new Promise<void>((resolve) => this.add(resolve, ms, scope)),
    };
  }

  private add(fn: () => void, ms: number, scope: number): ClockTimer {
    const t: Timer = {
      due: this.nowMs + Math.max(0, ms),
      order: this.order++,
      fn,
      scope,
      cancelled: this.dead.has(scope),
    };
    this.timers.push(t);
    return {
      cancel: () => {
        t.cancelled = true;
      },
    };
  }

  /** Cancels every timer of `scope`, now and later. */
  kill(scope: number): void {
    this.dead.add(scope);
    for (const t of this.timers) if (t.scope === scope) t.cancelled = true;
  }

  /** Moves time to the next timer and fires every timer due then, in the order set; false when none. */
  fireNext(): boolean {
    this.timers = this.timers.filter((t) => !t.cancelled);
    if (this.timers.length === 0) return false;
    let due = Infinity;
    for (const t of this.timers) due = Math.min(due, t.due);
    this.nowMs = due;
    const firing = this.timers.filter((t) => t.due === due).sort((a, b) => a.order - b.order);
    this.timers = this.timers.filter((t) => t.due !== due);
    for (const t of firing) if (!t.cancelled) t.fn();
    return true;
  }

  /** Whether any live timer is set. */
  get pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
