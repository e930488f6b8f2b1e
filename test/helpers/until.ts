// Waits on a condition, never on a guess of how long something takes: polls `cond` until it holds,
// failing with `what` after `timeoutMs`. The bound
// is generous on purpose; a loaded machine only makes the wait longer, never the test wrong.
export async function until(
  cond: () => boolean | Promise<boolean>,
  opts: { timeoutMs?: number; stepMs?: number; what?: string } = {},
): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${opts.what ?? 'a condition'}`);
    await new Promise((r) => setTimeout(r, opts.stepMs ?? 10));
  }
}

/** Resolves once the wall clock has passed `t` (so anything stamped from now on is later than it). */
export async function clockPast(t: number): Promise<void> {
  while (Date.now() <= t) await new Promise((r) => setImmediate(r));
}
