// A read query at any node of a cluster: validated here against the whole schema (every node
// has it), then split by log partition, each part sent to one holder of its partitions (this
// node first, without HTTP), the partials merged and finalized exactly as one node merges
// shards (executor/merge.ts). Consistency: the coordinator reads the end offsets first and
// every holder waits until it has applied them, so a write acknowledged before the query
// started is in the answer. A holder that fails is replaced by the next holder of the same
// partitions; with none left the query answers 503, never a partial answer.
import { DomainError, badRequest } from '../../domain/errors.js';
import type { Engine } from '../../engine/engine.js';
import {
  type QueryBudget,
  QueryClock,
  checkBudget,
  compileReads,
  lookupIndex,
  queryBudget,
  type ReadPlan,
} from '../../executor/index.js';
import { appliedWithin } from './applied-within.js';
import { finalizeWithinBytes, mergeAllPreps } from '../../executor/merge.js';
import { type CallPartial, type CallPrep, innermostPlan, needsPrep, readMovesColumns } from '../../executor/partial.js';
import { type WirePrep, encodePrep } from '../../executor/partial-wire.js';
import { FRAMES_ANSWER, FRAMES_TYPE, FramesReader } from '../../executor/partial-frames.js';
import type { QueryOptions, QueryResponse } from '../../executor/result.js';
import type { Query } from '../../pql/ast.js';
import type { QueryRequestBounds } from '../../service/query-service.js';
import { PARTIAL_PATH } from './partial-routes.js';
import {
  type PartialRequest,
  type PartialResponse,
  type PartialRunner,
  decodeResponse,
  pastState,
} from './partial-runner.js';
import type { ReadonlyHolder } from '../../state/readonly.js';
import { encodeQuery } from './query-wire.js';
import { type ClusterView, type KafkaGate, type Member, PARTITION_MOVED, PARTITION_MOVED_CODE } from '../types.js';
import { OPEN_GATE } from '../membership/broker-watch.js';
import { type ClockTimer, systemClock } from '../../util/clock.js';

export interface FanoutSettings {
  /** --query-timeout (0: none); a request's `timeout` can shorten it. */
  queryTimeoutMs: number;
  /** --max-result-rows (0: none). */
  maxResultRows: number;
  /** --max-result-bytes (0 or absent: none): the merged answer's byte budget. */
  maxResultBytes?: number;
  /** Longest wait for one holder's answer before asking the next holder (default 30 s). */
  holderTimeoutMs?: number;
  /** The broker watch: with the broker unreachable a read answers 503 at once (default: none). */
  gate?: KafkaGate;
  /**
   * --cluster-stale-reads: with the broker unreachable, answer from what the holders have applied
   * (no end offsets to wait for), marked by `stale` on the answer, instead of 503.
   */
  staleReads?: boolean;
}

/** A read's answer; `stale`: why it may miss acknowledged writes (--cluster-stale-reads). */
export type ReadAnswer = QueryResponse & { stale?: string };

export interface FanoutLocal {
  engine: Engine;
  /** This node's partial runner (clusterPartialRoutes returns it). */
  runner: PartialRunner;
}

type Phase = PartialRequest['phase'];

/** How long a read waits for the first partition map of a node that has just started. */
const MAP_WAIT_MS = 10_000;
const MAP_POLL_MS = 25;

export class QueryFanout {
  constructor(
    private readonly view: ClusterView,
    private readonly local: FanoutLocal,
    private readonly settings: FanoutSettings,
  ) {}

  /**
   * `at` (atTime, ms): answered from the cluster's state as of then, on every holder and here.
   * Every step waits on Kafka (end offsets, holders reaching them): with the broker unreachable
   * the read answers 503 at once, or, with staleReads, from what the holders have applied.
   */
  run(index: string, query: Query, opts: QueryOptions, req: QueryRequestBounds = {}, at?: number): Promise<ReadAnswer> {
    const gate = this.settings.gate ?? OPEN_GATE;
    const down = gate.downSince();
    if (down !== undefined && this.settings.staleReads === true) {
      const stale = `the Kafka broker has been unreachable since ${new Date(down).toISOString()}: this answer is what the holders had applied, and may miss acknowledged writes`;
      return this.answer(index, query, opts, req, at, false).then((r) => ({ ...r, stale }));
    }
    return gate.untilDown(() => this.answer(index, query, opts, req, at, true));
  }

  /** `fresh`: wait for the topics' ends (the consistent read); else answer from what is applied. */
  private async answer(
    index: string,
    query: Query,
    opts: QueryOptions,
    req: QueryRequestBounds,
    at: number | undefined,
    fresh: boolean,
  ): Promise<QueryResponse> {
    const gate = this.settings.gate ?? OPEN_GATE;
    const timeoutMs = effectiveTimeout(this.settings.queryTimeoutMs, req.timeoutMs);
    // The client's flag, read when needed: an AbortSignal is made only for a wait (below).
    const budget = queryBudget(timeoutMs, req.client ?? req.signal);
    const now = systemClock.now();
    const arrived = systemClock.monotonic();
    const queryOpts: QueryOptions = {
      ...opts,
      maxResultRows: this.settings.maxResultRows,
      maxResultBytes: this.settings.maxResultBytes,
    };
    // The ends of both topics that hold every write acknowledged before the query arrived (a
    // shared refresh, cluster-ends.ts): the meta end here (the schema and keys), the log's below.
    // A stale read (broker down, --cluster-stale-reads) waits for none.
    const ends = fresh
      ? await gate.through(() => this.view.endsForRead(arrived))
      : { meta: '0', log: new Map<number, string>() };
    const metaOffset = ends.meta;
    if (this.view.position('meta', 0) < BigInt(metaOffset))
      await appliedWithin(this.view, [['meta', 0, metaOffset]], budget, timeoutMs > 0 ? timeoutMs : undefined);
    // The schema and keys as of `at` (this node applied the meta topic up to now).
    const past = at === undefined ? undefined : await pastState(this.local.engine, at);
    const onState = <T>(fn: (h: ReadonlyHolder) => T): T =>
      past === undefined ? this.local.engine.peekApplied(fn) : fn(past);
    // Validation first, here: the same errors, with the same texts, as a single node.
    const plans = onState(
      (h) => compileReads(lookupIndex(h, index), query.calls, queryOpts, new QueryClock(now)).plans,
    );
    const partitions = this.partitionsFor(index, plans, opts);
    const waitFor: Record<string, string> = {};
    for (const p of partitions) waitFor[String(p)] = ends.log.get(p) ?? '0';
    const base = {
      index,
      query: encodeQuery(query),
      opts: wireOpts(queryOpts),
      waitFor,
      metaOffset,
      now,
      ...(at === undefined ? {} : { at }),
    };
    // A Shift moves columns across shards: only one node holding every partition answers it.
    const whole = partitions.length > 1 && plans.some(readMovesColumns);
    if (whole && !this.oneHolder(partitions)) throw shiftRefused();
    const wire: CollectWire = { failed: new Set(), budget, whole, columns: false };
    let preps: CallPrep[] | undefined;
    if (plans.some(needsPrep)) {
      const answers = await this.collect('prep', partitions, base, undefined, wire);
      preps = mergeAllPreps(plans, prepsOf(answers));
    }
    // Binary frames only for calls that answer columns: for a Count's few bytes, a stream of
    // frames cost more than JSON (510 against 244-363 req/s at one connection).
    wire.columns = plans.some((p) => innermostPlan(p).kind === 'bitmap');
    const answers = await this.collect('partial', partitions, base, preps?.map(encodePrep), wire);
    const parts: CallPartial[][] = answers.map((a) => ('partials' in a ? a.partials : []));
    if (parts.some((p) => p.length !== plans.length)) throw new Error('a holder answered the wrong number of partials');
    // Within the answer's byte budget, as one node's (the columns counted before the merge).
    return onState((h) => finalizeWithinBytes(lookupIndex(h, index), plans, parts, queryOpts));
  }

  /** All partitions; only those of the request's shards when no Options() names others. */
  private partitionsFor(index: string, plans: readonly ReadPlan[], opts: QueryOptions): number[] {
    const own = (p: ReadPlan): boolean => p.kind === 'options' && (p.settings.shards !== undefined || own(p.child));
    if (opts.shards !== undefined && opts.shards.length > 0 && !plans.some(own))
      return [...new Set(opts.shards.map((s) => this.view.partitionOf(index, s)))].sort((a, b) => a - b);
    return this.allPartitions();
  }

  private allPartitions(): number[] {
    return Array.from({ length: this.view.partitions }, (_, p) => p);
  }

  private oneHolder(partitions: readonly number[]): boolean {
    const first = this.view.holders(partitions[0])[0]?.id;
    return first !== undefined && partitions.every((p) => this.view.holders(p)[0]?.id === first);
  }

  /**
   * A node that has just (re)started answers before its first partition map arrives: its reads
   * wait for the map (bounded) and go to the holders it names, instead of answering 503.
   */
  private async mapped(partitions: readonly number[], budget: QueryBudget): Promise<void> {
    const until = systemClock.monotonic() + MAP_WAIT_MS;
    const unmapped = (): boolean =>
      this.view.map() === undefined && partitions.some((p) => this.view.holders(p).length === 0);
    while (unmapped() && systemClock.monotonic() < until) {
      checkBudget(budget);
      await systemClock.sleep(MAP_POLL_MS);
    }
  }

  /** Whether a map newer than `generation` arrives within MAP_WAIT_MS. */
  private async newerMap(generation: number | undefined, budget: QueryBudget): Promise<boolean> {
    const until = systemClock.monotonic() + MAP_WAIT_MS;
    const newer = (): boolean => {
      const g = this.view.map()?.generation;
      return g !== undefined && (generation === undefined || g > generation);
    };
    while (!newer() && systemClock.monotonic() < until) {
      checkBudget(budget);
      await systemClock.sleep(MAP_POLL_MS);
    }
    return newer();
  }

  /**
   * Which holder answers for each partition: this node for those it holds caught up, then as few
   * other members as cover the rest (one HTTP round trip less per member left out), among the
   * holders that are not restoring; a partition with none of those goes to its first holder.
   */
  private pick(
    pending: readonly number[],
    failed: ReadonlySet<string>,
    reasons: readonly string[],
  ): Map<string, { member: Member; partitions: number[] }> {
    const groups = new Map<string, { member: Member; partitions: number[] }>();
    const add = (member: Member, p: number): void => {
      const g = groups.get(member.id) ?? { member, partitions: [] };
      g.partitions.push(p);
      groups.set(member.id, g);
    };
    const restoring = this.view.map()?.restoring;
    const open = new Map<number, Member[]>();
    for (const p of pending) {
      const all = this.view.holders(p).filter((m) => !failed.has(m.id));
      if (all.length === 0)
        throw new DomainError(
          'unavailable',
          `cluster: no node holding log partition ${p} could answer${reasons.length > 0 ? ` (${reasons.join('; ')})` : ''}; try again`,
        );
      const ready = all.filter((m) => !(restoring?.[p] ?? []).includes(m.id));
      if (all[0].id === this.view.self.id || ready.length === 0) add(all[0], p);
      else open.set(p, ready);
    }
    while (open.size > 0) {
      const cover = new Map<string, { member: Member; n: number }>();
      for (const ms of open.values())
        for (const m of ms) cover.set(m.id, { member: m, n: (cover.get(m.id)?.n ?? 0) + 1 });
      let best: { member: Member; n: number } | undefined;
      for (const c of cover.values()) if (best === undefined || c.n > best.n) best = c;
      if (best === undefined) break;
      const chosen = best.member;
      for (const [p, ms] of open)
        if (ms.some((m) => m.id === chosen.id)) {
          add(chosen, p);
          open.delete(p);
        }
    }
    return groups;
  }

  /**
   * One answer per holder asked, covering every partition once. A holder that fails (down,
   * 5xx, too slow) is dropped for the rest of the query and its partitions go to their next
   * holder; a 4xx is the query's own error and ends it.
   */
  private async collect(
    phase: Phase,
    partitions: readonly number[],
    base: Omit<PartialRequest, 'partitions' | 'phase' | 'preps' | 'timeoutMs'>,
    preps: WirePrep[] | undefined,
    wire: CollectWire,
  ): Promise<PartialResponse[]> {
    const { failed, budget, whole, columns } = wire;
    const out: PartialResponse[] = [];
    let pending = [...partitions];
    const reasons: string[] = [];
    await this.mapped(partitions, budget);
    let generation = this.view.map()?.generation;
    /** Whether every holder that failed said its partition moved (a rebalance, not a fault). */
    let onlyMoved = true;
    while (pending.length > 0) {
      checkBudget(budget);
      let groups: Map<string, { member: Member; partitions: number[] }>;
      try {
        groups = this.pick(pending, failed, reasons);
      } catch (err) {
        // Every holder failed, e.g. each said its partition moved: during a rebalance the next
        // map names the new holders, so the query waits for it (bounded) and asks them.
        if (!onlyMoved || !(err instanceof DomainError) || !(await this.newerMap(generation, budget))) throw err;
        generation = this.view.map()?.generation;
        failed.clear();
        continue;
      }
      // The other members first, this node's own part last: see sentFirst.
      const self = this.view.self.id;
      const asked = [...groups.values()].sort((a, b) => Number(a.member.id === self) - Number(b.member.id === self));
      if (whole && (asked.length > 1 || out.length > 0)) throw shiftRefused();
      const remote = asked.length > 1 || (asked.length === 1 && asked[0].member.id !== self);
      const settled = await Promise.allSettled(
        asked.map((g) => {
          const body = { ...base, partitions: g.partitions, phase, preps };
          return g.member.id === self && remote
            ? sentFirst().then(() => this.ask(g.member, body, budget, columns))
            : this.ask(g.member, body, budget, columns);
        }),
      );
      pending = [];
      for (let i = 0; i < asked.length; i++) {
        const s = settled[i];
        if (s.status === 'fulfilled') {
          out.push(s.value);
          continue;
        }
        const err: unknown = s.reason;
        if (!(err instanceof HolderFailure)) throw err;
        failed.add(asked[i].member.id);
        if (!err.moved) onlyMoved = false;
        reasons.push(`${asked[i].member.id}: ${err.message}`);
        pending.push(...asked[i].partitions);
      }
    }
    return out;
  }

  /** One holder's answer: this node's runner in process, another node's over HTTP. */
  private async ask(
    member: Member,
    body: Omit<PartialRequest, 'timeoutMs'>,
    budget: QueryBudget,
    /** The answer may hold many columns: asked for as binary frames. */
    columns: boolean,
  ): Promise<PartialResponse> {
    const left = budget.deadline === Infinity ? undefined : Math.max(1, budget.deadline - systemClock.monotonic());
    const req: PartialRequest = left === undefined ? body : { ...body, timeoutMs: left };
    if (member.id === this.view.self.id) {
      try {
        return await this.local.runner.run(req, budget.client ?? budget.signal);
      } catch (err) {
        // This node gave up a partition meanwhile: another holder answers for it.
        if (err instanceof DomainError && err.code === 'unavailable')
          throw new HolderFailure(err.message, err.reason === PARTITION_MOVED_CODE);
        throw err;
      }
    }
    const wait = Math.min(this.settings.holderTimeoutMs ?? 30_000, left ?? Infinity);
    // A holder found down meanwhile (a SIGSTOPped process keeps its port open: only the probes
    // tell) is given up at once, not after its timeout: its partitions go to the next holder.
    const call = holderCall(Math.max(1, Math.ceil(wait)), () => this.view.isLive(member.id), budget);
    let res: { status: number; text: string } | { status: number; answer: PartialResponse };
    try {
      res = await this.post(`${member.url}${PARTIAL_PATH}`, req, call.signal, columns);
    } catch (err) {
      checkBudget(budget);
      if (call.down()) throw new HolderFailure(`node ${member.id} stopped answering its probes`);
      throw new HolderFailure(err instanceof Error ? err.message : String(err));
    } finally {
      call.stop();
    }
    if ('answer' in res) return res.answer;
    if (res.status >= 200 && res.status < 300) return decodeResponse(JSON.parse(res.text));
    const { message = `HTTP ${res.status}`, code } = errorOf(res.text);
    // A holder of an older build sends no code: its text says the same.
    const moved = code === undefined ? message.includes(PARTITION_MOVED) : code === PARTITION_MOVED_CODE;
    if (res.status >= 500) throw new HolderFailure(message, moved);
    // The holder refused the query itself (its deadline, the result bound, an index deleted).
    throw new DomainError(codeOf(res.status), message);
  }

  /**
   * A holder's answer: partials asked for in binary (partial-frames.ts) and read as their bytes
   * arrive, no JSON.parse of a whole answer; a holder of an older build answers JSON, read as
   * text. A cut or malformed binary answer rejects (the holder failed).
   */
  private async post(
    url: string,
    req: PartialRequest,
    signal: AbortSignal,
    columns: boolean,
  ): Promise<{ status: number; text: string } | { status: number; answer: PartialResponse }> {
    const stream = this.view.memberPostStream?.bind(this.view);
    if (stream === undefined || req.phase !== 'partial' || !columns)
      return this.view.memberPost(url, JSON.stringify(req), signal);
    const res = await stream(url, JSON.stringify({ ...req, answer: FRAMES_ANSWER }), signal);
    const binary = res.status === 200 && res.contentType.startsWith(FRAMES_TYPE);
    const frames = new FramesReader();
    const chunks: Uint8Array[] = [];
    for await (const c of res.body) {
      if (binary) frames.push(c);
      else chunks.push(c);
    }
    if (binary) return { status: res.status, answer: { partials: frames.end() } };
    return { status: res.status, text: Buffer.concat(chunks).toString('utf8') };
  }
}

/**
 * Resolves after the member calls just made have gone out. node:http (the calls whose answers
 * are read as they arrive) writes a request on a kept connection in a process.nextTick
 * (onSocketNT), and this node's own part runs in microtasks, which all run before any nextTick:
 * without this turn the other members would start only once this node's part was computed,
 * instead of computing theirs meanwhile. (member-connection.ts writes at once.)
 */
function sentFirst(): Promise<void> {
  return new Promise((resolve) => process.nextTick(resolve));
}

/** How often an outstanding holder call looks at the member's liveness (membership/health.ts). */
const LIVENESS_POLL_MS = 100;

/**
 * One holder call's signal: it aborts after `ms`, once `live()` turns false or the query's client
 * is gone (both looked at every LIVENESS_POLL_MS), or with the budget's signal, until stop(). One controller and one timer a call, both
 * gone at stop(): AbortSignal.timeout and AbortSignal.any would leave a timer for the whole
 * holder timeout (30 s) and signals behind every call, two calls a query.
 */
function holderCall(
  ms: number,
  live: () => boolean,
  budget: QueryBudget,
): { signal: AbortSignal; down(): boolean; stop(): void } {
  const ac = new AbortController();
  let down = false;
  let timer: ClockTimer | undefined;
  const until = systemClock.monotonic() + ms;
  // The query's client: its signal when it has one, else its flag, looked at with the liveness.
  const outer = budget.signal;
  const onOuter = (): void => ac.abort(outer?.reason);
  const look = (): void => {
    if (budget.client?.aborted === true) {
      ac.abort();
      return;
    }
    if (!live()) {
      down = true;
      ac.abort();
      return;
    }
    const left = until - systemClock.monotonic();
    if (left <= 0) ac.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    else timer = systemClock.setTimeout(look, Math.min(LIVENESS_POLL_MS, Math.ceil(left)), { unref: true });
  };
  if (outer?.aborted === true) onOuter();
  else {
    outer?.addEventListener('abort', onOuter, { once: true });
    look();
  }
  return {
    signal: ac.signal,
    down: () => down,
    stop: () => {
      timer?.cancel();
      outer?.removeEventListener('abort', onOuter);
    },
  };
}

function shiftRefused(): DomainError {
  return badRequest('executing: Shift() needs the shards of several nodes: cluster mode does not run it yet');
}

function prepsOf(answers: readonly PartialResponse[]): CallPrep[][] {
  return answers.map((a) => ('preps' in a ? a.preps : []));
}

/** How collect() asks: what failed so far, the budget, and the answer's shape. */
interface CollectWire {
  failed: Set<string>;
  budget: QueryBudget;
  /** All partitions must go to one holder (Shift): a failover that splits them refuses. */
  whole: boolean;
  /** A call answers columns: partials asked for as binary frames (partial-frames.ts). */
  columns: boolean;
}

/** A holder that could not answer: its partitions go to another holder. */
class HolderFailure extends Error {
  override name = 'HolderFailure';
  constructor(
    message: string,
    /** The holder said its partition moved (a rebalance, not a fault). */
    readonly moved = false,
  ) {
    super(message);
  }
}

function wireOpts(o: QueryOptions): PartialRequest['opts'] {
  const out: PartialRequest['opts'] = {
    columnAttrs: o.columnAttrs,
    excludeColumns: o.excludeColumns,
    excludeRowAttrs: o.excludeRowAttrs,
  };
  if (o.shards !== undefined) out.shards = o.shards;
  if (o.maxResultRows !== undefined) out.maxResultRows = o.maxResultRows;
  if (o.maxResultBytes !== undefined) out.maxResultBytes = o.maxResultBytes;
  return out;
}

/** A holder's JSON error body ({"error": message, "code"?: reason}); nothing from another body. */
function errorOf(body: string): { message?: string; code?: string } {
  try {
    const v: unknown = JSON.parse(body);
    if (typeof v === 'object' && v !== null && 'error' in v && typeof v.error === 'string')
      return { message: v.error, ...('code' in v && typeof v.code === 'string' ? { code: v.code } : {}) };
  } catch {
    // not JSON
  }
  return {};
}

function codeOf(status: number): DomainError['code'] {
  switch (status) {
    case 404:
      return 'not_found';
    case 409:
      return 'conflict';
    case 413:
      return 'too_large';
    default:
      return 'bad_request';
  }
}

/** A request's `timeout` can shorten the server's deadline, never lift it. */
function effectiveTimeout(server: number, requested: number | undefined): number {
  if (requested === undefined || requested <= 0) return server;
  return server > 0 ? Math.min(server, requested) : requested;
}
