// Writes and queries running against a changing cluster (not a test file itself), checked so that
// a pass means something: each write sets a column never written before (Set(col, f=1)), spread
// over 16 shards, so the set of columns present is exactly the set of writes applied. A query
// that started after A writes were acknowledged and ended after S writes were sent must see
// every one of those A and nothing outside those S: Count ∈ [A, S], Row ⊇ acked[0..A), Row ⊆
// sent[0..S). An error or a refused connection is allowed (it is counted), a wrong answer never.
import { call } from '../helpers/cluster.js';

export const LOAD_INDEX = 'load';
export const LOAD_SHARDS = 16;
const SHARD_WIDTH = 1 << 20;

/** Column of the i-th write: round-robin over the shards, so every partition gets writes. */
export function loadColumn(i: number): number {
  return (i % LOAD_SHARDS) * SHARD_WIDTH + Math.floor(i / LOAD_SHARDS);
}

export interface RequestEvent {
  kind: 'write' | 'query';
  target: string;
  started: number;
  ended: number;
  ok: boolean;
}

export class CheckedLoad {
  /** Columns in send order / in acknowledgement order. */
  readonly sent: number[] = [];
  readonly acked: number[] = [];
  readonly violations: string[] = [];
  /** Every request in completion order. */
  readonly events: RequestEvent[] = [];
  private running = false;
  private loops: Promise<void>[] = [];
  private next = 0;

  /** `targets()` is read before every request: the nodes clients may talk to now. */
  constructor(private readonly targets: () => string[]) {}

  start(writers = 2, readers = 2): void {
    this.running = true;
    for (let i = 0; i < writers; i++) this.loops.push(this.writeLoop());
    for (let i = 0; i < readers; i++) this.loops.push(this.queryLoop());
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    this.loops = [];
  }

  /** The longest run of consecutive failed requests (completion order): "everything failing". */
  longestFailureRun(from = 0): number {
    let run = 0;
    let longest = 0;
    for (const e of this.events) {
      if (e.ended < from) continue;
      run = e.ok ? 0 : run + 1;
      longest = Math.max(longest, run);
    }
    return longest;
  }

  failures(from = 0): number {
    return this.events.filter((e) => e.ended >= from && !e.ok).length;
  }

  /**
   * Milliseconds from `from` until queries answered again for good: the end of the first
   * successful query after the last failed one (0 when none failed after `from`).
   */
  recoveredAfter(from: number): number {
    const qs = this.events.filter((e) => e.kind === 'query' && e.ended >= from);
    let lastFail = -1;
    qs.forEach((e, i) => {
      if (!e.ok) lastFail = i;
    });
    if (lastFail < 0) return 0;
    const back = qs.slice(lastFail + 1).find((e) => e.ok);
    return back === undefined ? Number.POSITIVE_INFINITY : back.ended - from;
  }

  private pick(): string | undefined {
    const t = this.targets();
    return t.length === 0 ? undefined : t[Math.floor(Math.random() * t.length)];
  }

  private async writeLoop(): Promise<void> {
    while (this.running) {
      const target = this.pick();
      if (target === undefined) break;
      const col = loadColumn(this.next++);
      this.sent.push(col);
      const started = Date.now();
      const a = await call(target, 'POST', `/index/${LOAD_INDEX}/query`, `Set(${col}, f=1)`);
      const ok = a.status === 200;
      if (ok) {
        // A column never written before: Set must report that it changed something.
        if (a.body.trim() !== '{"results":[true]}') this.violations.push(`Set(${col}) at ${target} answered ${a.body}`);
        this.acked.push(col);
      }
      this.events.push({ kind: 'write', target, started, ended: Date.now(), ok });
    }
  }

  private async queryLoop(): Promise<void> {
    let round = 0;
    while (this.running) {
      const target = this.pick();
      if (target === undefined) break;
      const byCount = round++ % 2 === 0;
      const ackedBefore = this.acked.length;
      const started = Date.now();
      const a = await call(target, 'POST', `/index/${LOAD_INDEX}/query`, byCount ? 'Count(Row(f=1))' : 'Row(f=1)');
      const sentBefore = this.sent.length;
      const ok = a.status === 200;
      if (ok) {
        let wrong: string | undefined;
        try {
          wrong = byCount
            ? this.checkCount(a.body, ackedBefore, sentBefore)
            : this.checkRow(a.body, ackedBefore, sentBefore);
        } catch (err) {
          wrong = `unreadable answer ${a.body.slice(0, 200)}: ${(err as Error).message}`;
        }
        if (wrong !== undefined) this.violations.push(`${target}: ${wrong}`);
      }
      this.events.push({ kind: 'query', target, started, ended: Date.now(), ok });
    }
  }

  private checkCount(body: string, acked: number, sent: number): string | undefined {
    const n = (JSON.parse(body) as { results: unknown[] }).results[0];
    if (typeof n !== 'number' || n < acked || n > sent)
      return `Count answered ${JSON.stringify(n)}, outside [${acked} acknowledged, ${sent} sent]`;
    return undefined;
  }

  private checkRow(body: string, acked: number, sent: number): string | undefined {
    return checkColumns(body, this.acked.slice(0, acked), this.sent.slice(0, sent));
  }
}

/** A Row answer must hold every column of `mustHave` and only columns of `mayHave`. */
export function checkColumns(body: string, mustHave: number[], mayHave: number[]): string | undefined {
  const r = (JSON.parse(body) as { results: { columns?: unknown }[] }).results[0];
  if (r === undefined || !Array.isArray(r.columns)) return `Row answered ${body.slice(0, 200)}`;
  const got = new Set(r.columns as number[]);
  const missing = mustHave.filter((c) => !got.has(c));
  const allowed = new Set(mayHave);
  const extra = [...got].filter((c) => !allowed.has(c));
  if (missing.length > 0 || extra.length > 0)
    return `Row misses acknowledged columns [${missing.slice(0, 10).join(',')}] (${missing.length}) or has unsent [${extra.slice(0, 10).join(',')}] (${extra.length})`;
  return undefined;
}

/**
 * After the load stopped: every live node must answer Row(f=1) with every acknowledged write and
 * nothing unsent. Errors are retried for a while (a node may still be taking partitions over);
 * the first 200 answer is the one judged.
 */
export async function finalCheck(load: CheckedLoad, urls: string[], timeoutMs = 30_000): Promise<string[]> {
  const problems: string[] = [];
  for (const url of urls) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const a = await call(url, 'POST', `/index/${LOAD_INDEX}/query`, 'Row(f=1)');
      if (a.status === 200) {
        const wrong = checkColumns(a.body, load.acked, load.sent);
        if (wrong !== undefined) problems.push(`${url}: ${wrong}`);
        break;
      }
      if (Date.now() > deadline) {
        problems.push(`${url} never answered Row(f=1): ${a.status} ${a.body.slice(0, 200)}`);
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return problems;
}

export function summary(load: CheckedLoad): string {
  const writes = load.events.filter((e) => e.kind === 'write');
  const queries = load.events.filter((e) => e.kind === 'query');
  return `${load.sent.length} writes sent, ${load.acked.length} acknowledged, ${writes.filter((e) => !e.ok).length} failed; ${queries.length} queries, ${queries.filter((e) => !e.ok).length} failed`;
}

/** Creates the load's index and field at `urls[0]` and waits until every node can query it. */
export async function createLoadSchema(urls: string[], timeoutMs = 30_000): Promise<void> {
  for (const [path, body] of [
    [`/index/${LOAD_INDEX}`, '{}'],
    [`/index/${LOAD_INDEX}/field/f`, '{}'],
  ]) {
    const a = await call(urls[0], 'POST', path, body);
    if (a.status !== 200) throw new Error(`POST ${path} at ${urls[0]} → ${a.status}: ${a.body}`);
  }
  for (const url of urls) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const a = await call(url, 'POST', `/index/${LOAD_INDEX}/query`, 'Count(Row(f=1))');
      if (a.status === 200) break;
      if (Date.now() > deadline) throw new Error(`${url} cannot query the new index: ${a.status} ${a.body}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
