// Test hooks of the commit queue, read from the environment here (the server command passes them
// to the engine as options; nothing below src/config/ reads the environment):
// - BITLEDGER_TEST_MAX_BATCH_RECORDS lowers the batch limit, and
//   BITLEDGER_TEST_PAUSE_AFTER_BATCH_MS pauses after every durable batch, so a crash test can
//   stage more than the limit in one request and kill between batches;
// - BITLEDGER_TEST_PAUSE_BEFORE_BATCH_MS holds every append back, so a test can act while a write
//   is staged but not yet durable.

export interface CommitTestHooks {
  maxBatchRecords?: number;
  pauseAfterBatchMs?: number;
  pauseBeforeBatchMs?: number;
}

export function commitTestHooks(env: NodeJS.ProcessEnv): CommitTestHooks {
  const hooks: CommitTestHooks = {};
  const max = Number(env.BITLEDGER_TEST_MAX_BATCH_RECORDS);
  if (Number.isSafeInteger(max) && max > 0) hooks.maxBatchRecords = max;
  const pause = Number(env.BITLEDGER_TEST_PAUSE_AFTER_BATCH_MS);
  if (Number.isSafeInteger(pause) && pause > 0) hooks.pauseAfterBatchMs = pause;
  const before = Number(env.BITLEDGER_TEST_PAUSE_BEFORE_BATCH_MS);
  if (Number.isSafeInteger(before) && before > 0) hooks.pauseBeforeBatchMs = before;
  return hooks;
}

/**
 * BITLEDGER_TEST_DISK_RESERVE_FLOOR lowers the floor of --disk-reserve-bytes, so a test can run
 * with the small reserve that lets a LevelDB compaction fill the disk (the stall it then causes).
 */
export function diskReserveFloorHook(env: NodeJS.ProcessEnv): number | undefined {
  const floor = Number(env.BITLEDGER_TEST_DISK_RESERVE_FLOOR);
  return Number.isSafeInteger(floor) && floor >= 0 ? floor : undefined;
}
