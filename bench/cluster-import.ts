// Issue 21's import figure: 16 per-shard protobuf imports (one at a time) into a single node, and
// the same into a three-node cluster two ways. Client-routed (the figure the target is on): each
// shard's import goes to the node `/internal/fragment/nodes` names for it, asked once per shard
// at the node the client was given, as go-pilosa and python-pilosa do. Round-robin over the
// nodes (printed beside it): a coordinator that does not hold the shard forwards it and asks a
// holder for the result. Each run also gives the servers' CPU time per import (from /proc, which a
// busy machine moves far less than the rates) and, for the cluster, where an import's time went
// (GET /cluster's writeStages, commands/write-stages.ts).
import { execFileSync } from 'node:child_process';
import { HttpClient } from './lib/http-client.js';
import { createField, createIndex, importProtobuf } from './lib/pilosa.js';
import { processCpuSeconds } from './lib/process-cpu.js';
import type { Reporter } from './lib/report.js';
import type { ChildServer } from './lib/server-child.js';
import { shardBody } from './lib/shard-bits.js';
import { now } from './lib/stats.js';

const SHARDS = 16;

/** Imports `bodies` one request at a time, spreading them over `urls`; returns ms. */
export async function timedImport(urls: string[], index: string, bodies: Uint8Array[]): Promise<number> {
  const clients = urls.map((u) => new HttpClient(u));
  const t0 = now();
  try {
    for (const [i, b] of bodies.entries()) await importProtobuf(clients[i % clients.length], index, 'f', b);
    return now() - t0;
  } finally {
    for (const c of clients) c.close();
  }
}

/** The node `/internal/fragment/nodes` at the entry node names for a shard, one client per node kept open. */
class Router {
  private readonly clients = new Map<string, HttpClient>();
  constructor(private readonly entry: string) {}

  /** Imports shard s's body at the node the entry names for it, the lookup included (a client asks once per index and shard). */
  async import(index: string, s: number, body: Uint8Array): Promise<void> {
    const answer = await this.client(this.entry).ok('GET', `/internal/fragment/nodes?index=${index}&shard=${s}`);
    const [node] = JSON.parse(answer.toString('utf8')) as { uri: { scheme: string; host: string; port: number } }[];
    await importProtobuf(this.client(`${node.uri.scheme}://${node.uri.host}:${node.uri.port}`), index, 'f', body);
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
  }

  private client(url: string): HttpClient {
    let c = this.clients.get(url);
    if (c === undefined) this.clients.set(url, (c = new HttpClient(url)));
    return c;
  }
}

type StageSums = Map<string, { count: number; totalMs: number }>;

/**
 * Every node's writeStages from GET /cluster, summed per stage; and its log acknowledgments held
 * and let go at once (`acks held`, `acks unheld`: read grants, membership/grants.ts).
 */
async function stageSums(urls: string[]): Promise<StageSums> {
  const out: StageSums = new Map();
  const add = (stage: string, count: number, totalMs: number): void => {
    const sum = out.get(stage) ?? { count: 0, totalMs: 0 };
    out.set(stage, { count: sum.count + count, totalMs: sum.totalMs + totalMs });
  };
  for (const url of urls) {
    const body = (await (await fetch(`${url}/cluster`)).json()) as {
      node?: {
        writeStages?: Record<string, { count: number; meanMs: number }>;
        acks?: { held: number; unheld: number };
      };
    };
    for (const [stage, s] of Object.entries(body.node?.writeStages ?? {})) add(stage, s.count, s.meanMs * s.count);
    const acks = body.node?.acks;
    if (acks !== undefined) {
      add('acks held', acks.held, 0);
      add('acks unheld', acks.unheld, 0);
    }
  }
  return out;
}

/** "stage mean ms (count)" from a run's totals (Run.step sums each import's difference). */
function stagesText(totals: StageSums): string {
  const parts: string[] = [];
  for (const [stage, { count, totalMs }] of totals) {
    if (count > 0 && stage.startsWith('acks ')) parts.push(`${stage} ${count}`);
    else if (count > 0) parts.push(`${stage} ${(totalMs / count).toFixed(1)} ms (${count})`);
  }
  return parts.join(', ');
}

const cpuOf = (servers: ChildServer[]): number =>
  servers.reduce((a, s) => a + (processCpuSeconds(s.pid) ?? Number.NaN), 0);

/** The run of one way of importing: its imports' wall time, CPU and (for the cluster) stages, summed. */
class Run {
  ms = 0;
  private cpuSeconds = 0;
  private readonly stageTotals: StageSums = new Map();

  constructor(
    private readonly servers: ChildServer[],
    private readonly stages: boolean,
  ) {}

  /** CPU ms per import, every server of the run together. */
  get cpuMs(): number {
    return (this.cpuSeconds * 1000) / SHARDS;
  }

  /** Times one import (the servers' CPU and stages around it). */
  async step(run: () => Promise<void>): Promise<void> {
    const urls = this.servers.map((s) => s.url);
    const s0 = this.stages ? await stageSums(urls) : undefined;
    const c0 = cpuOf(this.servers);
    const t0 = now();
    await run();
    this.ms += now() - t0;
    this.cpuSeconds += cpuOf(this.servers) - c0;
    if (s0 === undefined) return;
    for (const [stage, a] of await stageSums(urls)) {
      const b = s0.get(stage) ?? { count: 0, totalMs: 0 };
      const sum = this.stageTotals.get(stage) ?? { count: 0, totalMs: 0 };
      this.stageTotals.set(stage, {
        count: sum.count + a.count - b.count,
        totalMs: sum.totalMs + a.totalMs - b.totalMs,
      });
    }
  }

  stagesText(): string {
    return `${(this.ms / SHARDS).toFixed(1)} ms an import; ${stagesText(this.stageTotals)}`;
  }
}

/**
 * Imports each way makes in a row before the next way's turn. In a row, what one import leaves
 * running (a consumer's fetch of its own command, LevelDB's compaction) meets the next one, as it
 * does when a client imports back to back; between turns the servers go quiet, so it does not
 * meet another way's imports.
 */
const TURN = 4;
/** The servers are quiet when they used at most this much CPU a second, all together, more than idle (ms). */
const QUIET_ABOVE_IDLE_MS = 150;
/** The window the servers' CPU is read over (ms): /proc counts in 10 ms ticks. */
const QUIET_WINDOW_MS = 250;
/** The longest wait for quiet before a turn anyway (ms). */
const QUIET_WAIT_MS = 3_000;

/**
 * Waits (bounded) until the servers go quiet (TURN), after writing out every dirty page: one way's
 * writes left in the page cache made the next way's fsyncs wait for them (ext4 commits its journal
 * for all files at once), which slowed the single node's imports by half after the cluster's.
 */
async function quiet(servers: ChildServer[], idlePerSecond: number): Promise<void> {
  execFileSync('sync');
  const limit = ((idlePerSecond * 1000 + QUIET_ABOVE_IDLE_MS) * QUIET_WINDOW_MS) / 1000;
  for (let waited = 0; waited < QUIET_WAIT_MS; waited += QUIET_WINDOW_MS) {
    const c0 = cpuOf(servers);
    await new Promise((res) => setTimeout(res, QUIET_WINDOW_MS));
    if ((cpuOf(servers) - c0) * 1000 <= limit) return;
  }
}

async function schema(url: string, index: string): Promise<void> {
  const c = new HttpClient(url);
  await createIndex(c, index);
  await createField(c, index, 'f');
  c.close();
}

/**
 * The import figures, cold (each process's first imports: the JIT) and warm (the same again into
 * new indexes). The cluster's index `index` gets the client-routed import: the query figures after
 * compare it with the single node's `index`. The three ways take turns, TURN shards each, each
 * turn starting on quiet servers: this machine's speed moves by half within a minute (other VMs'
 * steal time), and one way's 16 imports in a row, then the next way's, made the cold ratio read
 * 0.27 and the warm one 0.65 in one run.
 */
export async function importFigures(
  r: Reporter,
  single: ChildServer,
  nodes: ChildServer[],
  index: string,
): Promise<void> {
  const urls = nodes.map((n) => n.url);
  // What the servers use doing nothing (the cluster's probes, consumers' polls, heartbeats): a
  // part of every run's CPU per import, more so the longer the run.
  const idleMs = 2_000;
  const [c0, s0] = [cpuOf(nodes), cpuOf([single])];
  await new Promise((res) => setTimeout(res, idleMs));
  // CPU ms per ms of wall time, idle.
  const idle = { single: ((cpuOf([single]) - s0) * 1000) / idleMs, cluster: ((cpuOf(nodes) - c0) * 1000) / idleMs };
  r.note(
    `CPU idle: single node ${(idle.single * 1000).toFixed(0)} ms/s, cluster ${(idle.cluster * 1000).toFixed(0)} ms/s (all three nodes)`,
  );
  // A run's CPU per import less what the servers would have used idle meanwhile (a slower run on a
  // busy machine counts more of it): the imports' own cost.
  const net = (run: Run, rate: number): string => (run.cpuMs - (rate * run.ms) / SHARDS).toFixed(1);
  const rounds = [
    { label: '', single: index, routed: index, robin: `${index}rr` },
    { label: ' (warm processes: the same again into new indexes)', single: 'w', routed: 'w', robin: 'wrr' },
  ];
  const all = [single, ...nodes];
  for (const [i, round] of rounds.entries()) {
    const bodies = (name: string) => Array.from({ length: SHARDS }, (_, s) => shardBody(name, s, [1, 2], 10));
    const shards = bodies(round.single);
    const bits = shards.reduce((a, b) => a + b.bits, 0);
    await schema(single.url, round.single);
    for (const name of [round.routed, round.robin]) await schema(urls[0], name);
    const routedBodies = bodies(round.routed).map((b) => b.body);
    const robinBodies = bodies(round.robin).map((b) => b.body);
    const [local, routed, robin] = [new Run([single], false), new Run(nodes, true), new Run(nodes, true)];
    const singleClient = new HttpClient(single.url);
    const robinClients = urls.map((u) => new HttpClient(u));
    const router = new Router(urls[0]);
    try {
      for (let first = 0; first < SHARDS; first += TURN) {
        const turn = Array.from({ length: Math.min(TURN, SHARDS - first) }, (_, k) => first + k);
        await quiet(all, idle.single + idle.cluster);
        for (const s of turn) await local.step(() => importProtobuf(singleClient, round.single, 'f', shards[s].body));
        await quiet(all, idle.single + idle.cluster);
        for (const s of turn) await routed.step(() => router.import(round.routed, s, routedBodies[s]));
        await quiet(all, idle.single + idle.cluster);
        for (const s of turn)
          await robin.step(() =>
            importProtobuf(robinClients[s % robinClients.length], round.robin, 'f', robinBodies[s]),
          );
      }
    } finally {
      singleClient.close();
      for (const c of robinClients) c.close();
      router.close();
    }
    if (i === 0)
      r.note(
        `data: rows 1 and 2 at 10% of ${SHARDS} shards, ${bits.toLocaleString('en-US')} bits in ${SHARDS} protobuf imports (one per shard, one at a time; the three ways take turns, ${TURN} shards each, each turn on quiet servers); cluster: 3 nodes, R=1, 16 partitions; client-routed: each shard to the node /internal/fragment/nodes names (as Pilosa's clients send), round-robin: over the nodes`,
      );
    const rate = (run: Run): number => (bits / run.ms) * 1000;
    r.figure(`import into the single node${round.label}`, rate(local), 'bits/s');
    r.figure('  … through the cluster, client-routed', rate(routed), 'bits/s');
    const target = { op: '>=', value: 0.6, source: 'issue 21' } as const;
    r.figure(
      '  … cluster (client-routed) / single node',
      rate(routed) / rate(local),
      '×',
      i === 0 ? target : undefined,
    );
    r.figure('  … through the cluster, round-robin over the nodes', rate(robin), 'bits/s');
    r.figure('  … cluster (round-robin) / single node', rate(robin) / rate(local), '×');
    r.note(
      `CPU per import: single node ${local.cpuMs.toFixed(1)} ms, cluster client-routed ${routed.cpuMs.toFixed(1)} ms, round-robin ${robin.cpuMs.toFixed(1)} ms (all three nodes); less idle: ${net(local, idle.single)}, ${net(routed, idle.cluster)}, ${net(robin, idle.cluster)} ms`,
    );
    r.note(`stages, client-routed: ${routed.stagesText()}`);
    r.note(`stages, round-robin: ${robin.stagesText()}`);
  }
}
