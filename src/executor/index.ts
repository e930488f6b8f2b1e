// The executor: PQL read calls × a Holder → results in Pilosa's shapes (docs/API.md §3, §4).
//
// Invariants:
// - Never mutates state. Reads of unknown keys do not allocate IDs: they read as empty rows /
//   absent columns. Fragment rows handed around are read-only views; combinations build new
//   bitmaps.
// - A call is compiled (fully validated: names, fields, types, argument types and ranges, keys)
//   before anything runs, so execution itself cannot fail on bad input. Errors are DomainErrors
//   (400) with Pilosa's texts, prefixed `executing: ` (plus `map reduce: ` where Pilosa adds it).
// - Work is per shard; nothing builds a global column list except the final Row result, and
//   Count of a combination only sums per-shard cardinalities.
// - Shards: the request's `shards`, else the index's shards with data, else [0]; computed per
//   call, so a read sees the shards created by earlier writes of the same request.
// - The async variant yields between shards and restarts if the state changed meanwhile
//   (see query.ts), so every answer reflects a single state.
// - TopN caches are derived and in memory (cache.ts); exact right after recalculateCaches().
export { compileRead, compileOptions } from './compile-read.js';
export { compileBitmap, type CompileEnv } from './compile-bitmap.js';
export { QueryClock } from './clock.js';
export { checkKeys } from './key-check.js';
export { bitmapAt, outShards, type RO } from './bitmap-eval.js';
export { ReadContext, queryContext, shardsFor } from './context.js';
export { drainSync, executeRead, executeReadSync, rowResult, type CallOutput, type Work } from './run.js';
export { executeQuery, lookupIndex } from './query.js';
export {
  executeQueryAsync,
  executeQueryNow,
  executePreparedAsync,
  executePreparedNow,
  type AsyncReadOptions,
} from './query-async.js';
export { type BudgetClient, type QueryBudget, budgetSignal, checkBudget, queryBudget } from './budget.js';
export { compileReads, runReadsSync } from './reads.js';
export { respond, columnAttrSets } from './respond.js';
export { recalculateCaches } from './cache.js';
export { fieldArg, fail, failWith, goType, goValue, WRITE_CALLS, type Fail } from './args.js';
export { colRef, rowRef, resolveCol, resolveRow, isKeyedField } from './refs.js';
export type { BitmapPlan, OptionSettings, ReadPlan, Ref, ColRef, RowsSpec } from './plan.js';
