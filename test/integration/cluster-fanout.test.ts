// The read fan-out between real nodes: three servers (real LevelDB, real sockets), each holding
// the shards of its log partitions, with POST /internal/cluster/partial registered, and a
// fixed partition map (a test double of membership only: a wait ends at once unless the node does
// not hold the partition, or lags in a test). The
// fanned-out answer of every query must equal a single server's holding all the data; a holder
// that is down sends its partitions to the other holder (R=2) or makes the query answer 503
// (R=1), never a wrong answer.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { DomainError } from '../../src/domain/errors.js';
import { SHARD_WIDTH } from '../../src/domain/shard.js';
import { createServer } from '../../src/app.js';
import { DEFAULTS } from '../../src/config/config.js';
import { clusterPartialRoutes } from '../../src/cluster/reads/partial-routes.js';
import { QueryFanout } from '../../src/cluster/reads/query-fanout.js';
import type { PartialRunner } from '../../src/cluster/reads/partial-runner.js';
import { clusterMaxShards, shardsMaxAnswer } from '../../src/cluster/reads/shards-max.js';
import {
  type ClusterTopic,
  type ClusterView,
  type Member,
  PARTITION_MOVED,
  PARTITION_MOVED_CODE,
  type PartitionMap,
} from '../../src/cluster/types.js';
import { maxShards } from '../../src/executor/max-shards.js';
import type { QueryOptions, QueryResponse } from '../../src/executor/result.js';
import { parse } from '../../src/pql/index.js';
import { QueryService } from '../../src/service/query-service.js';
import { type TestServer, removeDir, startServer, stopServer, tempDir } from '../helpers/server.js';

const P = 6;
const W = SHARD_WIDTH;
const partitionOf = (_index: string, shard: number): number => shard % P;

/** Membership as a fixed map: every holder is caught up, end offsets are all 0. */
class StaticView implements ClusterView {
  readonly name = 'test';
  readonly partitions = P;
  constructor(
    readonly self: Member,
    private readonly members: () => Member[],
    private readonly holderIds: (p: number) => string[],
    readonly replicas: number,
  ) {}
  memberFetch(url: string, init?: RequestInit): Promise<Response> {
    return fetch(url, init);
  }
  async memberPost(url: string, body: string, signal?: AbortSignal): Promise<{ status: number; text: string }> {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal });
    return { status: res.status, text: await res.text() };
  }
  /**
   * The builds this node's reads meet: 'binary' (this build everywhere: partials in binary),
   * 'older-coordinator' (no streamed post: the coordinator asks for JSON), 'older-holders' (the
   * holders ignore the ask for binary and answer JSON, as a build before it does).
   */
  builds: 'binary' | 'older-coordinator' | 'older-holders' = 'binary';
  get memberPostStream(): ClusterView['memberPostStream'] {
    if (this.builds === 'older-coordinator') return undefined;
    const older = this.builds === 'older-holders';
    return async (url: string, body: string, signal?: AbortSignal) => {
      const sent = older ? JSON.stringify({ ...(JSON.parse(body) as object), answer: undefined }) : body;
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: sent,
        signal,
      });
      if (res.body === null) throw new Error('an answer without a body');
      return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: res.body };
    };
  }
  partitionOf(index: string, shard: number): number {
    return partitionOf(index, shard);
  }
  /** The map's generation (a test moves it on as a rebalance would). */
  generation = 1;
  map(): PartitionMap {
    return {
      generation: this.generation,
      partitions: P,
      members: this.members(),
      holders: Array.from({ length: P }, (_, p) => this.holderIds(p)),
    };
  }
  holders(p: number): Member[] {
    const ids = this.holderIds(p);
    const ordered = ids.includes(this.self.id) ? [this.self.id, ...ids.filter((i) => i !== this.self.id)] : ids;
    return ordered.map((id) => {
      const m = this.members().find((x) => x.id === id);
      if (m === undefined) throw new Error(`no member ${id}`);
      return m;
    });
  }
  /** Below every offset: each wait goes to waitApplied, which tells whether this node holds the partition. */
  position(_topic: ClusterTopic, _partition: number): bigint {
    return -1n;
  }
  async logEndOffsets(partitions: readonly number[]): Promise<Map<number, string>> {
    return new Map(partitions.map((p) => [p, '0']));
  }
  async metaEndOffset(): Promise<string> {
    return '0';
  }
  async endsForRead(): Promise<{ meta: string; log: Map<number, string> }> {
    return { meta: '0', log: new Map() };
  }
  async metaEndForWrite(): Promise<string> {
    return '0';
  }
  /** Members this view takes for down (the probes' verdict). */
  readonly down = new Set<string>();
  isLive(id: string): boolean {
    return !this.down.has(id);
  }
  /** A lagging node never catches up on its log partitions (until the waiter gives up). */
  lagging = false;
  /** Told when a lagging node is asked to wait. */
  onLagging: () => void = () => undefined;
  /**
   * A rebalance took this node's log partitions away: waits on them fail as membership fails
   * them (runtime.ts onRevoked), with the text only (`'text'`: a holder of an older build).
   */
  moved: false | 'code' | 'text' = false;
  /** Told when a node whose partitions moved is asked. */
  onMoved: () => void = () => undefined;
  async waitApplied(topic: ClusterTopic, partition: number, _next: string, signal?: AbortSignal): Promise<void> {
    if (topic === 'log' && this.moved !== false) {
      this.onMoved();
      const text = `partition ${partition} ${PARTITION_MOVED}`;
      throw new DomainError('unavailable', text, this.moved === 'code' ? PARTITION_MOVED_CODE : undefined);
    }
    if (topic === 'log' && !this.holderIds(partition).includes(this.self.id))
      throw new DomainError('unavailable', `node ${this.self.id} does not hold log partition ${partition}`);
    if (topic === 'log' && this.lagging) {
      this.onLagging();
      await new Promise<void>((_, reject) =>
        signal?.addEventListener('abort', () => reject(new DomainError('unavailable', 'gave up waiting'))),
      );
    }
  }
}

interface Node {
  server: TestServer;
  member: Member;
  fanout: (replicas: number) => QueryFanout;
  view: (replicas: number) => StaticView;
}

const SCHEMA = [
  ['s', { options: { type: 'set', cacheSize: 50 } }],
  ['m', { options: { type: 'mutex' } }],
  ['n', { options: { type: 'int', min: -100, max: 100 } }],
  ['t', { options: { type: 'time', timeQuantum: 'YMD' } }],
] as const;

/** Deterministic data over shards 0..7: row r of s gets column c when (c + r) % (r + 2) === 0. */
function writesFor(shard: number): string[] {
  const out: string[] = [];
  for (let o = 0; o < 12; o++) {
    const c = shard * W + o * 7;
    for (let r = 0; r < 5; r++) if ((o + r + shard) % (r + 2) === 0) out.push(`Set(${c}, s=${r})`);
    out.push(`Set(${c}, m=${(o + shard) % 3})`);
    if (o % 2 === 0) out.push(`Set(${c}, n=${((o * 13 + shard * 7) % 41) - 20})`);
    if (o % 3 === 0) out.push(`Set(${c}, t=${o % 2}, 2018-0${1 + (shard % 3)}-0${1 + (o % 5)}T00:00)`);
  }
  return out;
}

const SHARDS = [0, 1, 2, 3, 4, 5, 6, 7, 9];
/** A column above 2^53 (a bigint in results, a string on the wire), in partition 3. */
const BIG_SHARD = 2 ** 40 + 5;
const BIG_COLUMN = (BigInt(BIG_SHARD) << 20n) + 5n;

const QUERIES = [
  'Count(Row(s=1))',
  'Count(Union(Row(s=0), Row(s=2)))',
  'Count(Intersect(Row(s=1), Row(m=0)))',
  'Count(Difference(Row(s=0), Row(s=1)))',
  'Count(Xor(Row(s=3), Row(m=2)))',
  'Count(Not(Row(s=0)))',
  'Row(s=1)',
  'Row(s=4)',
  'Row(t=1, from=2018-01-01T00:00, to=2018-02-03T00:00)',
  'Count(Row(n > 5))',
  'Sum(field=n)',
  'Sum(Row(s=1), field=n)',
  'Min(field=n)',
  'Max(Row(m=1), field=n)',
  'MinRow(field=s)',
  'MaxRow(Row(m=2), field=s)',
  'TopN(s)',
  'TopN(s, n=2)',
  'TopN(s, Row(m=1), n=3)',
  'TopN(s, ids=[0, 3, 4])',
  'TopN(s, threshold=3)',
  'TopN(s, Row(s=2), tanimotoThreshold=30)',
  'TopN(s, attrName=color, attrValues=["red"])',
  'Rows(s)',
  'Rows(s, previous=1, limit=2)',
  `Rows(s, column=${3 * W + 14})`,
  'Rows(t, from=2018-01-01T00:00, to=2018-03-01T00:00)',
  'GroupBy(Rows(s), Rows(m))',
  'GroupBy(Rows(s), Rows(m), limit=4, offset=2)',
  'GroupBy(Rows(s, limit=2), Rows(m), filter=Row(n > 0))',
  'Options(Count(Row(s=1)), shards=[1, 4, 9])',
  'Options(Row(s=1), columnAttrs=true)',
  'Count(Row(s=0)) Row(s=2) TopN(s, n=1) GroupBy(Rows(m))',
];

const opts: QueryOptions = { columnAttrs: false, excludeColumns: false, excludeRowAttrs: false };

async function post(url: string, body: string): Promise<void> {
  const r = await fetch(url, { method: 'POST', body });
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
}

async function setupSchema(url: string): Promise<void> {
  await post(`${url}/index/i`, JSON.stringify({ options: { trackExistence: true } }));
  for (const [name, body] of SCHEMA) await post(`${url}/index/i/field/${name}`, JSON.stringify(body));
}

/** A request for the partials of partition 1 (an empty query), as a coordinator sends it. */
function partialOf1(): Record<string, unknown> {
  return {
    index: 'i',
    query: [],
    opts: { columnAttrs: false, excludeColumns: false, excludeRowAttrs: false },
    partitions: [1],
    waitFor: { 1: '0' },
    metaOffset: '0',
    phase: 'partial',
    now: Date.now(),
  };
}

/** A fastify app nobody listens on: only to get a PartialRunner from clusterPartialRoutes. */
async function bareApp(): Promise<FastifyInstance> {
  return Fastify();
}

describe('query fan-out over real nodes', () => {
  const nodes: Node[] = [];
  let single: TestServer | undefined;
  let members: Member[] = [];
  const dirs: string[] = [];
  const routeViews: StaticView[] = [];
  const nodeRunners: PartialRunner[] = [];
  // R=2: partition p on nodes p%3 and (p+1)%3; R=1: on node p%3 only.
  const holdersR = (r: number) => (p: number) =>
    Array.from({ length: r }, (_, k) => members[(p + k) % members.length].id);

  beforeAll(async () => {
    single = await startServer();
    await setupSchema(`http://127.0.0.1:${await single.listen()}`);
    for (let i = 0; i < 3; i++) {
      const dataDir = tempDir();
      dirs.push(dataDir);
      const server = await createServer(
        { ...DEFAULTS, bind: '127.0.0.1:0', dataDir },
        pino({ level: 'silent' }),
        () => undefined,
      );
      const id = `node${i}`;
      const views = new Map<number, StaticView>();
      const viewFor = (r: number): StaticView => {
        let v = views.get(r);
        if (v === undefined) {
          v = new StaticView(member, () => members, holdersR(r), r);
          views.set(r, v);
        }
        return v;
      };
      // The route's view: it holds what R=2 gives it (a superset of R=1).
      const member: Member = { id, url: '' };
      const runner = clusterPartialRoutes(server.app, { engine: server.engine, view: viewFor(2) });
      routeViews.push(viewFor(2));
      nodeRunners.push(runner);
      await server.app.ready();
      const port = await server.listen();
      Object.assign(member, { url: `http://127.0.0.1:${port}` });
      const node: Node = {
        server: Object.assign(server, { dataDir, fatal: [] }),
        member,
        view: viewFor,
        fanout: (r) =>
          new QueryFanout(viewFor(r), { engine: server.engine, runner }, { queryTimeoutMs: 0, maxResultRows: 0 }),
      };
      nodes.push(node);
    }
    members = nodes.map((n) => n.member);
    const singleUrl = `http://127.0.0.1:${single.app.server.address() === null ? 0 : (single.app.server.address() as { port: number }).port}`;
    for (const n of nodes) {
      await setupSchema(n.member.url);
      await post(`${n.member.url}/index/i/query`, 'SetRowAttrs(s, 1, color="red") SetRowAttrs(s, 3, color="red")');
      await post(`${n.member.url}/index/i/query`, `SetColumnAttrs(${W + 7}, seen=true)`);
    }
    await post(`${singleUrl}/index/i/query`, 'SetRowAttrs(s, 1, color="red") SetRowAttrs(s, 3, color="red")');
    await post(`${singleUrl}/index/i/query`, `SetColumnAttrs(${W + 7}, seen=true)`);
    for (const shard of SHARDS) {
      const pql = writesFor(shard).join(' ');
      await post(`${singleUrl}/index/i/query`, pql);
      for (const id of holdersR(2)(partitionOf('i', shard))) {
        const n = nodes.find((x) => x.member.id === id);
        if (n !== undefined) await post(`${n.member.url}/index/i/query`, pql);
      }
    }
    const big = `Set(${BIG_COLUMN}, s=1) Set(${BIG_COLUMN}, m=0)`;
    await post(`${singleUrl}/index/i/query`, big);
    for (const id of holdersR(2)(partitionOf('i', BIG_SHARD))) {
      const n = nodes.find((x) => x.member.id === id);
      if (n !== undefined) await post(`${n.member.url}/index/i/query`, big);
    }
    for (const s of [single, ...nodes.map((n) => n.server)]) await post(`${urlOf(s)}/recalculate-caches`, '');
  }, 60_000);

  afterAll(async () => {
    for (const n of nodes) await n.server.close().catch(() => undefined);
    for (const d of dirs) removeDir(d);
    await stopServer(single);
  });

  function urlOf(s: TestServer): string {
    const a = s.app.server.address();
    if (a === null || typeof a === 'string') throw new Error('not listening');
    return `http://127.0.0.1:${a.port}`;
  }

  async function want(q: string, o: QueryOptions = opts): Promise<QueryResponse> {
    if (single === undefined) throw new Error('no single server');
    return (await new QueryService(single.engine).execute('i', q, o)).response;
  }

  it('every query fanned out from any node equals one node holding all the data, partials in binary or JSON', async () => {
    for (const builds of ['binary', 'older-coordinator', 'older-holders'] as const)
      for (const q of QUERIES) {
        const expected = await want(q);
        for (const n of nodes) {
          n.view(2).builds = builds;
          expect({ q, builds, at: n.member.id, got: await n.fanout(2).run('i', parse(q), opts) }).toEqual({
            q,
            builds,
            at: n.member.id,
            got: expected,
          });
          n.view(2).builds = 'binary';
        }
      }
    // Request options: shards and columnAttrs.
    const o = { ...opts, shards: [1, 3, 9], columnAttrs: true };
    expect(await nodes[0].fanout(2).run('i', parse('Row(s=1) Count(Row(s=0))'), o)).toEqual(
      await want('Row(s=1) Count(Row(s=0))', o),
    );
  });

  it("validation errors are a single node's", async () => {
    const outcome = (p: Promise<QueryResponse>): Promise<unknown> =>
      p.then(
        (r) => ({ ok: r }),
        (e: unknown) => (e instanceof DomainError ? { code: e.code, error: e.message } : { other: String(e) }),
      );
    for (const q of ['Row(nope=1)', 'Rows(nope)', 'Sum(field=s)', 'GroupBy()', 'TopN(s, n=x)', 'Row(s="a")']) {
      const expected = await outcome(want(q));
      expect(expected).toHaveProperty('error');
      expect({ q, got: await outcome(nodes[1].fanout(2).run('i', parse(q), opts)) }).toEqual({ q, got: expected });
    }
  });

  it('Shift over shards of several nodes is refused, not answered wrong', async () => {
    await expect(nodes[0].fanout(2).run('i', parse('Count(Shift(Row(s=1), n=1))'), opts)).rejects.toMatchObject({
      code: 'bad_request',
      message: expect.stringContaining('Shift()'),
    });
  });

  it("the result bound is checked on the merged answer, with a single node's error", async () => {
    if (single === undefined) throw new Error('no single server');
    const bounded = new QueryService(single.engine, { queryTimeoutMs: 0, maxResultRows: 3 });
    const n = nodes[0];
    const fanout = new QueryFanout(
      new StaticView(n.member, () => members, holdersR(2), 2),
      {
        engine: n.server.engine,
        runner: clusterPartialRoutes(await bareApp(), {
          engine: n.server.engine,
          view: new StaticView(n.member, () => members, holdersR(2), 2),
        }),
      },
      { queryTimeoutMs: 0, maxResultRows: 3 },
    );
    for (const q of [
      'Rows(s)',
      'Rows(s, limit=3)',
      'GroupBy(Rows(s), Rows(m))',
      'GroupBy(Rows(s), Rows(m), limit=3)',
      'TopN(s)',
      'TopN(s, n=3)',
    ]) {
      const expected = await bounded.execute('i', q, opts).then(
        (r) => ({ ok: r.response }),
        (e: unknown) => ({ error: String(e) }),
      );
      const got = await fanout.run('i', parse(q), opts).then(
        (r) => ({ ok: r }),
        (e: unknown) => ({ error: String(e) }),
      );
      expect({ q, got }).toEqual({ q, got: expected });
    }
  });

  it('POST /internal/cluster/partial: a bad body is 400, a partition not held is 503, both JSON', async () => {
    const url = `${nodes[0].member.url}/internal/cluster/partial`;
    const bad = await fetch(url, { method: 'POST', body: '{"index": "i"}' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: expect.stringContaining('cluster partial:') });
    const body = partialOf1();
    // node0 holds partitions 0, 2, 3, 5 under R=2.
    const notHeld = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
    expect(notHeld.status).toBe(503);
    expect(await notHeld.json()).toEqual({ error: expect.stringContaining('does not hold log partition 1') });
    const held = await fetch(url, {
      method: 'POST',
      body: JSON.stringify({ ...body, partitions: [0], waitFor: { 0: '0' } }),
    });
    expect(held.status).toBe(200);
    expect(await held.json()).toEqual({ partials: [] });
  });

  it('cluster-wide shards max is the max over every member', async () => {
    // node2 holds partitions 1, 2, 4, 5 (shards up to 7); shards 9 and BIG_SHARD are in partition 3.
    const view = new StaticView(nodes[2].member, () => members, holdersR(2), 2);
    expect(await nodes[2].server.engine.read(maxShards)).toEqual({ i: 7 });
    const local = async () => ({ standard: await nodes[2].server.engine.read(maxShards), inverse: {} });
    expect((await clusterMaxShards(view, local)).standard).toEqual({ i: BIG_SHARD });
    // The index has no inverse views: every member's inverse maximum is 0, as one node's /slices/max says.
    const answer = shardsMaxAnswer(view, nodes[2].server.engine);
    expect(await answer({})).toEqual({ standard: { i: BIG_SHARD }, inverse: { i: 0 } });
    expect(await answer({ local: 'true' })).toEqual({ standard: { i: 7 }, inverse: { i: 0 } });
  });

  it('a holder that lags behind the end offsets is passed over for the next holder', async () => {
    // Asked from node1, partitions 2 and 5 go to node2 first (node1 does not hold them).
    const lagging = routeViews[2];
    lagging.lagging = true;
    try {
      const n = nodes[1];
      const fanout = new QueryFanout(
        new StaticView(n.member, () => members, holdersR(2), 2),
        { engine: n.server.engine, runner: nodeRunners[1] },
        { queryTimeoutMs: 0, maxResultRows: 0, holderTimeoutMs: 300 },
      );
      for (const q of ['Count(Row(s=1))', 'TopN(s, n=2)', 'GroupBy(Rows(s, limit=2), Rows(m))'])
        expect({ q, got: await fanout.run('i', parse(q), opts) }).toEqual({ q, got: await want(q) });
    } finally {
      lagging.lagging = false;
    }
  });

  it('holders whose partitions moved answer 503 with code partition_moved; the query waits for the next map', async () => {
    const url = `${nodes[1].member.url}/internal/cluster/partial`;
    const body = partialOf1();
    const q = 'Count(Row(s=1))';
    for (const how of ['code', 'text'] as const) {
      for (const v of [routeViews[1], routeViews[2]]) v.moved = how;
      try {
        const res = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
        expect(res.status).toBe(503);
        const error = expect.stringContaining(PARTITION_MOVED);
        expect(await res.json()).toEqual(how === 'code' ? { error, code: PARTITION_MOVED_CODE } : { error });
        // Asked from node0 under R=1: node1 and node2 say their partitions moved. The query waits
        // for a newer map (here: the same holders, moved back) instead of answering 503.
        const view = new StaticView(nodes[0].member, () => members, holdersR(1), 1);
        let asked = 0;
        const rebalanced = (): void => {
          asked++;
          for (const v of [routeViews[1], routeViews[2]]) v.moved = false;
          setTimeout(() => view.generation++, 50);
        };
        routeViews[1].onMoved = rebalanced;
        routeViews[2].onMoved = rebalanced;
        const fanout = new QueryFanout(
          view,
          { engine: nodes[0].server.engine, runner: nodeRunners[0] },
          { queryTimeoutMs: 0, maxResultRows: 0 },
        );
        expect(await fanout.run('i', parse(q), opts)).toEqual(await want(q));
        expect(asked).toBeGreaterThan(0);
        expect(view.generation).toBe(2);
      } finally {
        for (const v of [routeViews[1], routeViews[2]]) {
          v.moved = false;
          v.onMoved = () => undefined;
        }
      }
    }
  });

  it('a holder that stops answering mid-query is given up once found down, not after its timeout', async () => {
    // A stopped process: node2 takes the request and never answers (no timeout would end it in
    // this test); once the asking node's probes find it down, its partitions go to their other holder.
    const stopped = routeViews[2];
    stopped.lagging = true;
    const n = nodes[1];
    const view = new StaticView(n.member, () => members, holdersR(2), 2);
    stopped.onLagging = () => view.down.add('node2');
    try {
      const fanout = new QueryFanout(
        view,
        { engine: n.server.engine, runner: nodeRunners[1] },
        { queryTimeoutMs: 0, maxResultRows: 0, holderTimeoutMs: 600_000 },
      );
      const q = 'Count(Row(s=1))';
      expect(await fanout.run('i', parse(q), opts)).toEqual(await want(q));
      expect(view.down.has('node2')).toBe(true);
    } finally {
      stopped.lagging = false;
      stopped.onLagging = () => undefined;
    }
  });

  it('a holder down: R=2 answers from the other holder, R=1 answers 503, never a wrong count', async () => {
    const down = nodes[1];
    await down.server.close();
    for (const q of QUERIES) {
      const expected = await want(q);
      expect({ q, got: await nodes[0].fanout(2).run('i', parse(q), opts) }).toEqual({ q, got: expected });
      const r1 = nodes[2].fanout(1).run('i', parse(q), opts);
      await expect(r1).rejects.toMatchObject({ code: 'unavailable' });
    }
  });
});
