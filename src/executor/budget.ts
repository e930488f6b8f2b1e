// What one query may spend: a deadline (--query-timeout, or the request's `timeout` argument),
// the client still waiting (an AbortSignal the HTTP layer fires when the connection closes),
// and how many rows, groups or pairs its result may hold (--max-result-rows).
//
// Why 400 for a query past its deadline: Pilosa answers every query execution error, a context
// deadline included, with 400 {"error": …}; its clients show that message as the query's error
// and do not retry it, which is right here too — the same query would run past its deadline
// again. 408 would tell clients (and browsers) that the *request* was slow to arrive and invite
// an automatic retry; 503/504 mean an outage or a proxy.
import { badRequest } from '../domain/errors.js';
import { type Clock, systemClock } from '../util/clock.js';

export interface QueryBudget {
  /** clock.monotonic() after which the query is cancelled. */
  readonly deadline: number;
  /** The timeout it came from, for the error text. */
  readonly timeoutMs: number;
  /** Fired when the client is gone: nobody would read the answer. */
  readonly signal?: AbortSignal;
  /**
   * Whether the client is gone, when there is no signal (an AbortSignal costs several µs);
   * `signal()` makes one on demand (work handed to query workers is cancelled through it).
   */
  readonly client?: BudgetClient;
  /** What the deadline is measured on (and what slices of the query are timed by). */
  readonly clock: Clock;
}

/** A client's gone flag, and (optionally) an AbortSignal for it made when first asked. */
export interface BudgetClient {
  readonly aborted: boolean;
  signal?(): AbortSignal;
}

/** The budget's AbortSignal: its own, or one its client makes now (none: nothing to cancel on). */
export function budgetSignal(b: QueryBudget): AbortSignal | undefined {
  return b.signal ?? b.client?.signal?.();
}

export function queryBudget(
  timeoutMs: number,
  signal?: AbortSignal | BudgetClient,
  clock: Clock = systemClock,
): QueryBudget {
  const start = clock.monotonic();
  const deadline = timeoutMs > 0 ? start + timeoutMs : Infinity;
  if (signal instanceof AbortSignal || signal === undefined) return { deadline, timeoutMs, signal, clock };
  return { deadline, timeoutMs, client: signal, clock };
}

/** Throws when the query must stop: its deadline passed or its client went away. */
export function checkBudget(b: QueryBudget | undefined, now?: number): void {
  if (b === undefined) return;
  now ??= b.clock.monotonic();
  if (b.signal?.aborted === true || b.client?.aborted === true)
    throw badRequest('executing: query cancelled: the client closed the connection');
  if (now > b.deadline) {
    throw badRequest(
      `executing: query timeout: the query ran past its deadline of ${b.timeoutMs} ms (raise it with the timeout argument or --query-timeout)`,
    );
  }
}

/** Rows(), GroupBy() and TopN() results larger than the bound are refused, not sent. */
export function checkResultRows(n: number, max: number | undefined, what: string): void {
  if (max === undefined || max <= 0 || n <= max) return;
  throw badRequest(
    `executing: ${what} would return more than ${max} rows (max-result-rows); narrow it with limit= or filters`,
  );
}
