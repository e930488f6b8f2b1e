// The holder's side of a fanned-out read: wait until this node has applied what the coordinator
// saw (the meta offset and each listed log partition's end offset), then run the query's calls
// over the local shards of the listed partitions and answer their partials (or, phase one,
// TopN candidates and GroupBy children rows). The coordinator runs its own part through the
// same function, without HTTP.
import { type DomainError, badRequest } from '../../domain/errors.js';
import type { Engine } from '../../engine/engine.js';
import { HistoryRangeError } from '../../engine/history.js';
import type { ReadonlyHolder } from '../../state/readonly.js';
import { type BudgetClient, QueryClock, lookupIndex, queryBudget, queryContext } from '../../executor/index.js';
import { type CallPartial, type CallPrep, partialsWork, prepsWork } from '../../executor/partial.js';
import {
  type WirePartial,
  type WirePrep,
  WireError,
  decodePartial,
  decodePrep,
  encodePartial,
  encodePrep,
} from '../../executor/partial-wire.js';
import type { FRAMES_ANSWER } from '../../executor/partial-frames.js';
import { runSliced } from '../../executor/query-async.js';
import { compileReads } from '../../executor/reads.js';
import { precountAnswer } from '../../executor/answer-size.js';
import type { QueryOptions } from '../../executor/result.js';
import type { Work } from '../../executor/run.js';
import type { ClusterView } from '../types.js';
import { type WireCall, decodeQuery } from './query-wire.js';
import { type AheadOffset, appliedWithin } from './applied-within.js';

export interface PartialRequest {
  index: string;
  query: WireCall[];
  opts: {
    shards?: number[];
    columnAttrs: boolean;
    excludeColumns: boolean;
    excludeRowAttrs: boolean;
    maxResultRows?: number;
    /** --max-result-bytes: this holder's own part past it is refused before it is built. */
    maxResultBytes?: number;
  };
  /** Log partitions whose local shards this node answers for. */
  partitions: number[];
  /** Log partition → offset this node must have applied first (the coordinator's end offsets). */
  waitFor: Record<string, string>;
  /** Meta offset to have applied first (schema, keys, attributes). */
  metaOffset: string;
  /** 'prep': phase one (TopN candidates, GroupBy children rows); 'partial': the partials. */
  phase: 'prep' | 'partial';
  /** Phase one merged over all shards, one per call (phase 'partial' of a query that has one). */
  preps?: WirePrep[];
  /** The coordinator's clock (ms since epoch): a time range's default end derives from it. */
  now: number;
  /** What is left of the query's deadline; absent: none. */
  timeoutMs?: number;
  /**
   * atTime (ms): answer from the cluster's state as of then (each partition as of its last command
   * stamped at or before it, engine/command-time.ts), not the live one. Absent: live.
   */
  at?: number;
  /**
   * FRAMES_ANSWER: the coordinator reads partials in their binary form (executor/partial-frames.ts).
   * Absent (a coordinator of an older build): JSON. A holder of an older build ignores the field
   * and answers JSON, which the coordinator still reads (its content type tells).
   */
  answer?: typeof FRAMES_ANSWER;
}

/** A holder's answer as the coordinator merges it (the wire forms are the route's). */
export type PartialResponse = { preps: CallPrep[] } | { partials: CallPartial[] };

/** A holder's answer as JSON (the form of every build before the binary one, and of phase one). */
export type WireResponse = { preps: WirePrep[] } | { partials: WirePartial[] };

export function encodeResponse(r: PartialResponse): WireResponse {
  return 'preps' in r ? { preps: r.preps.map(encodePrep) } : { partials: r.partials.map(encodePartial) };
}

export function decodeResponse(v: unknown): PartialResponse {
  const o = (typeof v === 'object' && v !== null ? v : {}) as Partial<Record<'preps' | 'partials', unknown>>;
  if (Array.isArray(o.preps)) return { preps: o.preps.map(decodePrep) };
  if (Array.isArray(o.partials)) return { partials: o.partials.map(decodePartial) };
  throw new WireError('cluster partial: an answer without preps or partials');
}

export class PartialRunner {
  constructor(
    private readonly engine: Engine,
    private readonly view: ClusterView,
  ) {}

  /** `client`: the coordinator's connection (its hanging up stops the wait and the work). */
  async run(req: PartialRequest, client?: AbortSignal | BudgetClient): Promise<PartialResponse> {
    const budget = queryBudget(req.timeoutMs ?? 0, client);
    const behind: AheadOffset[] = [];
    if (this.view.position('meta', 0) < BigInt(req.metaOffset)) behind.push(['meta', 0, req.metaOffset]);
    for (const p of req.partitions) {
      const off = req.waitFor[String(p)];
      if (off !== undefined && this.view.position('log', p) < BigInt(off)) behind.push(['log', p, off]);
    }
    // Most parts find every offset applied already: the signals are made only for a wait.
    if (behind.length > 0) await appliedWithin(this.view, behind, budget, req.timeoutMs);
    const query = decodeQuery(req.query);
    const parts = new Set(req.partitions);
    const preps: CallPrep[] | undefined = req.preps?.map(decodePrep);
    const opts: QueryOptions = req.opts;
    const clock = new QueryClock(req.now);
    const run = (h: ReadonlyHolder): Promise<PartialResponse> => {
      const prepare = (): Work<PartialResponse> => {
        const index = lookupIndex(h, req.index);
        const { plans, answer } = compileReads(index, query.calls, opts, clock);
        const ctx = queryContext(index, opts, (s) => parts.has(this.view.partitionOf(index.name, s)));
        return req.phase === 'prep'
          ? prepWork(prepsWork(ctx, plans))
          : partialWork(partialsWork(ctx, plans, preps ?? []), precountAnswer(ctx, plans, answer));
      };
      return runSliced(prepare(), prepare, h, { budget });
    };
    // A past state is built from the durable log only: nothing to wait for once it exists.
    if (req.at !== undefined) return run(await pastState(this.engine, req.at));
    return this.engine.readAsync(run);
  }
}

/** The cluster's state as of `at` on this node; a time it cannot rebuild is the query's 400. */
export async function pastState(engine: Engine, at: number): Promise<ReadonlyHolder> {
  try {
    return await engine.history.commandStateAt(at);
  } catch (err) {
    if (err instanceof HistoryRangeError) throw badRequest(err.message);
    throw err;
  }
}

function* prepWork(w: Work<CallPrep[]>): Work<PartialResponse> {
  return { preps: yield* w };
}

/** `precount` first: a part already past the answer's byte budget is refused before it is built. */
function* partialWork(w: ReturnType<typeof partialsWork>, precount: Work<void>): Work<PartialResponse> {
  yield* precount;
  return { partials: yield* w };
}

/** The request body, checked: a malformed one is a 400, never a wrong answer. */
export function decodePartialRequest(body: unknown): PartialRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('expected a JSON object');
  const b = body as Record<string, unknown>;
  if (typeof b.index !== 'string') throw bad('index: expected a string');
  if (!Array.isArray(b.query)) throw bad('query: expected a list of calls');
  const partitions = uints(b.partitions, 'partitions');
  const waitFor = offsets(b.waitFor);
  if (!isOffset(b.metaOffset)) throw bad('metaOffset: expected a decimal offset');
  if (b.phase !== 'prep' && b.phase !== 'partial') throw bad('phase: expected "prep" or "partial"');
  if (typeof b.now !== 'number' || !Number.isFinite(b.now)) throw bad('now: expected ms since the epoch');
  if (b.timeoutMs !== undefined && (typeof b.timeoutMs !== 'number' || !(b.timeoutMs > 0)))
    throw bad('timeoutMs: expected a positive number');
  if (b.preps !== undefined && !Array.isArray(b.preps)) throw bad('preps: expected a list');
  if (b.at !== undefined && (typeof b.at !== 'number' || !Number.isFinite(b.at)))
    throw bad('at: expected ms since the epoch');
  return {
    index: b.index,
    query: b.query as WireCall[],
    opts: options(b.opts),
    partitions,
    waitFor,
    metaOffset: b.metaOffset,
    phase: b.phase,
    preps: b.preps as WirePrep[] | undefined,
    now: b.now,
    timeoutMs: b.timeoutMs,
    ...(b.at === undefined ? {} : { at: b.at }),
    // Another value (a later build's form) is not asked for here: this build answers JSON.
    ...(b.answer === 'frames/1' ? { answer: 'frames/1' as const } : {}),
  };
}

function options(v: unknown): PartialRequest['opts'] {
  if (typeof v !== 'object' || v === null) throw bad('opts: expected an object');
  const o = v as Record<string, unknown>;
  const flag = (k: string): boolean => {
    if (typeof o[k] !== 'boolean') throw bad(`opts.${k}: expected a boolean`);
    return o[k] as boolean;
  };
  const out: PartialRequest['opts'] = {
    columnAttrs: flag('columnAttrs'),
    excludeColumns: flag('excludeColumns'),
    excludeRowAttrs: flag('excludeRowAttrs'),
  };
  if (o.shards !== undefined) out.shards = uints(o.shards, 'opts.shards');
  if (o.maxResultRows !== undefined) {
    if (typeof o.maxResultRows !== 'number' || !Number.isSafeInteger(o.maxResultRows))
      throw bad('opts.maxResultRows: expected an integer');
    out.maxResultRows = o.maxResultRows;
  }
  if (o.maxResultBytes !== undefined) {
    if (typeof o.maxResultBytes !== 'number' || !Number.isSafeInteger(o.maxResultBytes) || o.maxResultBytes < 0)
      throw bad('opts.maxResultBytes: expected a non-negative integer');
    out.maxResultBytes = o.maxResultBytes;
  }
  return out;
}

function uints(v: unknown, what: string): number[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0))
    throw bad(`${what}: expected a list of non-negative integers`);
  return v as number[];
}

function offsets(v: unknown): Record<string, string> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad('waitFor: expected an object');
  const out: Record<string, string> = {};
  for (const [k, off] of Object.entries(v)) {
    if (!/^\d+$/.test(k) || !isOffset(off)) throw bad('waitFor: expected partition → decimal offset');
    out[k] = off;
  }
  return out;
}

function isOffset(v: unknown): v is string {
  return typeof v === 'string' && /^\d+$/.test(v);
}

const bad = (m: string): DomainError => badRequest(`cluster partial: ${m}`);
