// Durations in settings and query arguments: Go's form as Pilosa writes them ("1m30s", "500ms",
// "24h"), plus days ("7d"), or a bare number in the setting's own unit (ms for query timeouts and
// *-ms settings, seconds for the history window).
const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** Milliseconds, or undefined when `text` is not a non-negative duration. */
export function parseDurationMs(text: string, bareUnitMs = 1): number | undefined {
  const v = text.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * bareUnitMs;
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d))+$/.test(v)) return undefined;
  let ms = 0;
  for (const m of v.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)/g)) ms += Number(m[1]) * UNIT_MS[m[2]];
  return Number.isFinite(ms) ? ms : undefined;
}
