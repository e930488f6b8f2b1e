// Durations in settings: "24h", "90m", "30s", "1500ms", "7d", or a bare number of seconds.
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds, or undefined when `text` is not a non-negative duration. */
export function parseDurationMs(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (m === null) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2] ?? 's'];
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}
