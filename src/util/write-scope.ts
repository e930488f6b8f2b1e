// Which log sequences one request wrote, so that work tied to a write (waiting for the Kafka
// mirror under --kafka-mirror-ack kafka) is done for writes only and never delays a read.
// The HTTP layer opens a scope per request; Engine.write notes the last sequence it staged.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface WriteScope {
  /** Highest sequence this request staged; 0 while it wrote nothing. */
  lastSeq: number;
}

const scopes = new AsyncLocalStorage<WriteScope>();

export function runInWriteScope<T>(scope: WriteScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

export function noteWrite(seq: number): void {
  const s = scopes.getStore();
  if (s !== undefined && seq > s.lastSeq) s.lastSeq = seq;
}

/**
 * A consumer applying one command of a topic (cluster mode): its writes count as replicated (a
 * node whose local writes are refused still applies them), and Engine.write stages `cursors` in
 * the group of every write the command causes, so the position that says "applied" becomes
 * durable together with what the command changed, never before or after it.
 */
export interface ApplyScope {
  readonly cursors: readonly { key: string; value: Uint8Array }[];
  /**
   * The command's CommandApplied event (events/types.ts; util/ cannot name it): Engine.write
   * emits it first in every group the command writes, so each record's command is in the log.
   */
  readonly opening?: unknown;
  /** Set by Engine.write once it staged the cursors in a write's group. */
  staged: boolean;
}

const applying = new AsyncLocalStorage<ApplyScope>();

export function runInApplyScope<T>(scope: ApplyScope, fn: () => T): T {
  return applying.run(scope, fn);
}

export function currentApplyScope(): ApplyScope | undefined {
  return applying.getStore();
}
