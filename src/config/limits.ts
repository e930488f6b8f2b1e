// Every bound has a name here. Requests beyond them get a 4xx, never a crash.
export const LIMITS = {
  /** Largest request body (imports are the big ones). */
  maxBodyBytes: 256 * 1024 * 1024,
  /** Largest PQL text. */
  maxQueryBytes: 8 * 1024 * 1024,
  /** Top-level write calls in one query (Pilosa's max-writes-per-request). */
  maxWritesPerRequest: 5000,
  /** Bits (pairs or values) in one import request. */
  maxImportItems: 64 * 1024 * 1024,
  /** Events staged into one LevelDB batch by the commit queue. */
  maxBatchRecords: 50_000,
} as const;
