// The call names the server knows, as string constants. The parser hands these out instead of
// fresh slices of the query text, so the executor's many `switch (call.name)` comparisons match
// by identity (V8 compares two internalized strings by pointer, a fresh slice by content).
/** Calls that return a bitmap (and may be the input of another bitmap call). */
export const BITMAP_CALL_NAMES = ['Row', 'Range', 'Union', 'Intersect', 'Difference', 'Xor', 'Not', 'Shift'] as const;
/** Read calls that return something else. */
export const OTHER_READ_CALL_NAMES = [
  'Count',
  'Sum',
  'Min',
  'Max',
  'MinRow',
  'MaxRow',
  'TopN',
  'Rows',
  'GroupBy',
  'Options',
] as const;
/** Pilosa's write calls. */
export const WRITE_CALL_NAMES = ['Set', 'Clear', 'ClearRow', 'Store', 'SetRowAttrs', 'SetColumnAttrs'] as const;
/** 0.x calls, rewritten to current ones before anything runs. */
const LEGACY_CALL_NAMES = ['Bitmap', 'SetBit', 'ClearBit', 'SetFieldValue'] as const;

const KNOWN: ReadonlyMap<string, string> = new Map(
  [...BITMAP_CALL_NAMES, ...OTHER_READ_CALL_NAMES, ...WRITE_CALL_NAMES, ...LEGACY_CALL_NAMES].map((n) => [n, n]),
);

/** `name` itself, as the shared constant when it is a known call name. */
export function canonicalCallName(name: string): string {
  return KNOWN.get(name) ?? name;
}

/** Whether `name` is a call the server knows (metrics label it by name, others as "other"). */
export function isKnownCallName(name: string): boolean {
  return KNOWN.has(name);
}

/**
 * The known call name equal to `name` as one string kept for good (its hash computed once, so a
 * metrics label lookup by it is cheap), or undefined for a name the server does not know.
 */
export function knownCallName(name: string): string | undefined {
  return KNOWN.get(name);
}
