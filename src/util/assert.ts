// Invariant checks. A failed assertion means the process state can no longer be trusted:
// it throws an AssertionError that the HTTP layer never converts into a 4xx, and main exits,
// so a restart replays the log into a clean state.
export class AssertionError extends Error {
  override name = 'AssertionError';
}

export function assert(cond: unknown, message: string): asserts cond {
  if (!cond) throw new AssertionError(message);
}

export function assertNever(x: never, what = 'value'): never {
  throw new AssertionError(`unexpected ${what}: ${JSON.stringify(x)}`);
}
