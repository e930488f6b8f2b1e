// Crash tests kill the server while clients talk to it. Only the connection failing (refused,
// reset, closed mid-answer) may end a client quietly; any answer the server did give must be
// right, so everything else (a wrong status, a wrong body, an assertion) is rethrown.

/** Socket-level failures Node's fetch (undici) reports when the peer process is gone. */
const GONE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** True only for "the server is gone": fetch's TypeError caused by a dead connection. */
export function isServerGone(err: unknown): boolean {
  if (!(err instanceof TypeError)) return false;
  // 'fetch failed' (connect/send) or 'terminated' (the body was cut off while being read).
  if (err.message !== 'fetch failed' && err.message !== 'terminated') return false;
  const cause: unknown = err.cause;
  if (cause === null || typeof cause !== 'object') return false;
  const code = (cause as { code?: unknown }).code;
  return typeof code === 'string' && GONE_CODES.has(code);
}

/** Runs one client call; resolves false when the server is gone, rethrows anything else. */
export async function unlessServerGone(call: () => Promise<void>): Promise<boolean> {
  try {
    await call();
    return true;
  } catch (err) {
    if (isServerGone(err)) return false;
    throw err;
  }
}
