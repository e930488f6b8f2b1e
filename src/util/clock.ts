// The clock port: every time the server reads (commit times, durations, deadlines, retention
// windows) and every timer the engine sets comes through a Clock. The server runs on
// systemClock; the simulator (sim/) passes a virtual clock, so a run of the real engine depends
// on its seed alone. This file is the only one in src/ outside config/ and cli/ that reads the
// wall clock (`npm run lint`, scripts/check-clock-env.mjs).

/** A timer set through a Clock. */
export interface ClockTimer {
  cancel(): void;
}

export interface Clock {
  /** Wall-clock ms since the epoch (commit times, retention windows, "written at"). */
  now(): number;
  /** ms from an arbitrary origin, never going backwards: durations, deadlines, slices. */
  monotonic(): number;
  /**
   * Calls `fn` once after `ms`. `unref`: the timer does not keep the process alive (background
   * work such as a trim or a periodic flush).
   */
  setTimeout(fn: () => void, ms: number, opts?: { unref?: boolean }): ClockTimer;
  /** Resolves after `ms`. */
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout(fn, ms, opts) {
    const t = setTimeout(fn, ms);
    if (opts?.unref === true) t.unref();
    return { cancel: () => clearTimeout(t) };
  },
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/**
 * ms since the epoch at sub-ms resolution, comparable between threads (each thread's
 * performance.now() has its own origin): the query workers' timelines only.
 */
export function crossThreadMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Calls `fn` every `ms` until cancelled (each run scheduled after the previous one started). */
export function every(clock: Clock, ms: number, fn: () => void, opts?: { unref?: boolean }): ClockTimer {
  let current: ClockTimer | undefined;
  let cancelled = false;
  const arm = (): void => {
    current = clock.setTimeout(
      () => {
        if (cancelled) return;
        arm();
        fn();
      },
      ms,
      opts,
    );
  };
  arm();
  return {
    cancel() {
      cancelled = true;
      current?.cancel();
    },
  };
}
