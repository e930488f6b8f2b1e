// Cluster mode under test (docs/CLUSTER.md): N real server processes on loopback ports, each with
// its own temp data directory, members of one cluster whose name is unique to the test, on the
// run's Kafka broker. Also a single non-cluster reference server started the same way. Every
// process is stopped by its PID (stop(), and a process 'exit' hook as a safety net), its data
// directory removed, and the cluster's topics deleted from the shared broker.
import { randomUUID } from 'node:crypto';
import {
  type ClusterMapView,
  coverageProblem,
  deleteClusterTopics,
  type NodeMap,
  parseClusterMap,
} from './cluster-map.js';
import { afterAll, beforeAll } from 'vitest';
import { kafkaBrokersForTest, type KafkaHandle } from './kafka-broker.js';
import { freePort, removeDir, spawnServer, tempDir, type ChildServer } from './server.js';

export { type ClusterMapView, type MapMember, owners, parseClusterMap } from './cluster-map.js';

export interface ClusterNode {
  /** Position in start order (0, 1, …), for messages. */
  readonly n: number;
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  readonly pid: number;
  /** The node id (GET /status localID), the id the partition map names it by. */
  readonly id: string;
  /** Still running and not asked to stop. */
  alive: boolean;
  output(): string;
  /** Flags of this node alone (TestCluster.add). */
  readonly extraArgs: string[];
}

interface Running {
  node: ClusterNode;
  child: ChildServer;
}

/** Every child this process started and has not reaped: killed by PID if the process exits. */
const children = new Map<number, ChildServer>();
let exitHook = false;
function track(child: ChildServer): void {
  if (child.proc.pid === undefined) return;
  children.set(child.proc.pid, child);
  child.proc.once('exit', () => children.delete(child.proc.pid ?? -1));
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const pid of children.keys()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    });
  }
}

/** An HTTP answer; status 0 means no answer (connection refused, reset, timeout). */
export interface Answer {
  status: number;
  body: string;
}

const REQUEST_TIMEOUT_MS = 15_000;

/** One HTTP request to a node; a failed connection is an answer with status 0, never a throw. */
export async function call(
  url: string,
  method: string,
  path: string,
  body?: string | Uint8Array,
  headers: Record<string, string> = {},
): Promise<Answer> {
  try {
    const r = await fetch(`${url}${path}`, {
      method,
      body: body === undefined ? undefined : typeof body === 'string' ? body : Buffer.from(body),
      headers,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    return { status: r.status, body: await r.text() };
  } catch (err) {
    return { status: 0, body: err instanceof Error ? `${err.message} ${String(err.cause ?? '')}` : String(err) };
  }
}

/** Like call() but throws unless the answer is 2xx. */
export async function callOk(
  url: string,
  method: string,
  path: string,
  body?: string | Uint8Array,
  headers?: Record<string, string>,
): Promise<string> {
  const a = await call(url, method, path, body, headers);
  if (a.status < 200 || a.status >= 300) throw new Error(`${method} ${url}${path} → ${a.status}: ${a.body}`);
  return a.body;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface ClusterOptions {
  brokers: string[];
  nodes: number;
  replicas?: number;
  partitions?: number;
  /** Extra server flags for every node. */
  extraArgs?: string[];
  /** Headers of the harness's own requests (/status, /cluster): a bearer token with --auth-token-file. */
  headers?: Record<string, string>;
  /** Environment added for each node, by its data directory (the power-cut shim's ledger). */
  env?: (dataDir: string) => NodeJS.ProcessEnv;
}

export class TestCluster {
  readonly name = `bltest-${randomUUID().slice(0, 8)}`;
  private readonly running: Running[] = [];

  private constructor(readonly opts: Required<ClusterOptions>) {}

  /** Starts `nodes` members one after another and waits until every partition has its holders. */
  static async start(opts: ClusterOptions): Promise<TestCluster> {
    const c = new TestCluster({ replicas: 1, partitions: 8, extraArgs: [], headers: {}, env: () => ({}), ...opts });
    try {
      // The first node creates the topics; the others join once they exist.
      for (let i = 0; i < opts.nodes; i++) await c.add({ wait: false });
      await c.waitCovered();
    } catch (err) {
      await c.stop();
      throw err;
    }
    return c;
  }

  get replicas(): number {
    return this.opts.replicas;
  }

  get partitions(): number {
    return this.opts.partitions;
  }

  get nodes(): ClusterNode[] {
    return this.running.map((r) => r.node);
  }

  live(): ClusterNode[] {
    return this.nodes.filter((n) => n.alive);
  }

  /** A member's server flags: the cluster's, then the node's own `extra`. */
  private args(url: string, extra: string[]): string[] {
    return [
      '--cluster-name',
      this.name,
      '--kafka-brokers',
      this.opts.brokers.join(','),
      '--advertise',
      url,
      '--replicas',
      String(this.opts.replicas),
      '--cluster-partitions',
      String(this.opts.partitions),
      ...this.opts.extraArgs,
      ...extra,
    ];
  }

  /**
   * Starts one more member (a join); with `wait`, returns once the map covers it too. `extraArgs`:
   * flags of this node alone.
   */
  async add({ wait = true, extraArgs = [] }: { wait?: boolean; extraArgs?: string[] } = {}): Promise<ClusterNode> {
    const port = await freePort();
    const dataDir = tempDir('bitledger-cluster-');
    const url = `http://127.0.0.1:${port}`;
    let child: ChildServer;
    try {
      child = await spawnServer(dataDir, port, this.args(url, extraArgs), this.opts.env(dataDir));
    } catch (err) {
      removeDir(dataDir);
      throw new Error(`cluster node ${this.running.length} did not start: ${(err as Error).message}`);
    }
    track(child);
    const status = JSON.parse(await callOk(url, 'GET', '/status', undefined, this.opts.headers)) as {
      localID?: unknown;
    };
    const node: ClusterNode = {
      n: this.running.length,
      url,
      port,
      dataDir,
      pid: child.proc.pid ?? -1,
      id: String(status.localID),
      alive: true,
      output: child.output,
      extraArgs,
    };
    this.running.push({ node, child });
    if (wait) await this.waitCovered();
    return node;
  }

  /**
   * Starts a stopped (killed) member again on its data directory and port; returns once it
   * answers /status (its replay is over), without waiting for the map: the restart window.
   */
  async relaunch(node: ClusterNode): Promise<ClusterNode> {
    const i = this.running.findIndex((x) => x.node === node);
    if (i < 0 || node.alive) throw new Error(`node ${node.n} is not a stopped member of this cluster`);
    const child = await spawnServer(
      node.dataDir,
      node.port,
      this.args(node.url, node.extraArgs),
      this.opts.env(node.dataDir),
    );
    track(child);
    const again: ClusterNode = { ...node, pid: child.proc.pid ?? -1, alive: true, output: child.output };
    this.running[i] = { node: again, child };
    return again;
  }

  /** Sends `signal` to the node's PID and waits until it exited; returns its exit code. */
  async signal(node: ClusterNode, signal: 'SIGKILL' | 'SIGTERM', timeoutMs = 60_000): Promise<number | null> {
    const r = this.running.find((x) => x.node === node);
    if (r === undefined) throw new Error(`node ${node.n} is not part of this cluster`);
    node.alive = false;
    const exited = r.child.kill(signal);
    const timer = setTimeout(() => r.child.proc.kill('SIGKILL'), timeoutMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** GET /cluster at one node. */
  async mapAt(node: ClusterNode): Promise<ClusterMapView | undefined> {
    return parseClusterMap(await callOk(node.url, 'GET', '/cluster', undefined, this.opts.headers));
  }

  /**
   * Polls GET /cluster at every live node until all of them hold the same map (same generation),
   * whose members are exactly the live nodes and where every partition has min(R, members)
   * distinct owners among them. `settled` also waits until no owner is still restoring and no
   * handoff holder is left (the map after a join or leave has finished).
   */
  async waitCovered({ settled = false, timeoutMs = 60_000 } = {}): Promise<ClusterMapView> {
    const deadline = Date.now() + timeoutMs;
    let why = 'not polled yet';
    for (;;) {
      const verdict = await this.coverage(settled);
      if (typeof verdict !== 'string') return verdict;
      why = verdict;
      if (Date.now() > deadline)
        throw new Error(`cluster ${this.name} not covered after ${timeoutMs} ms: ${why}\n${this.outputs()}`);
      await sleep(200);
    }
  }

  /** The common map, or why there is none yet. */
  private async coverage(settled: boolean): Promise<ClusterMapView | string> {
    const live = this.live();
    const maps: NodeMap[] = [];
    for (const node of live) {
      const a = await call(node.url, 'GET', '/cluster', undefined, this.opts.headers);
      if (a.status !== 200) return `node ${node.n}: GET /cluster → ${a.status} ${a.body.slice(0, 200)}`;
      maps.push({ node: `node ${node.n}`, map: parseClusterMap(a.body) });
    }
    const ids = live.map((n) => n.id);
    return (
      coverageProblem(maps, ids, this.opts.replicas, this.opts.partitions, settled) ?? (maps[0].map as ClusterMapView)
    );
  }

  /** The last lines each node printed, for failure messages. */
  outputs(): string {
    return this.running
      .map((r) => `--- node ${r.node.n} (${r.node.alive ? 'live' : 'stopped'}):\n${r.node.output().slice(-1500)}`)
      .join('\n');
  }

  /** SIGKILLs every node by PID, removes the data directories, deletes the cluster's topics. */
  async stop(): Promise<void> {
    for (const r of this.running) {
      r.node.alive = false;
      await r.child.kill('SIGKILL');
      removeDir(r.node.dataDir);
    }
    await deleteClusterTopics(this.opts.brokers, this.name);
  }
}

/** A single non-cluster server in its own process, started the same way as the members. */
export interface ReferenceServer {
  url: string;
  stop(): Promise<void>;
}

export async function startReference(extraArgs: string[] = []): Promise<ReferenceServer> {
  const dataDir = tempDir('bitledger-reference-');
  const port = await freePort();
  let child: ChildServer;
  try {
    child = await spawnServer(dataDir, port, extraArgs);
  } catch (err) {
    removeDir(dataDir);
    throw err;
  }
  track(child);
  return {
    url: child.url,
    async stop() {
      await child.kill('SIGKILL');
      removeDir(dataDir);
    },
  };
}

/**
 * A cluster for one test file: its broker and nodes start before the file's tests and stop after
 * them. The returned getter gives the running cluster (it throws when the start failed).
 */
export function clusterForFile(opts: Omit<ClusterOptions, 'brokers'>): () => TestCluster {
  let kafka: KafkaHandle | undefined;
  let cluster: TestCluster | undefined;
  beforeAll(async () => {
    kafka = await kafkaBrokersForTest();
    cluster = await TestCluster.start({ ...opts, brokers: kafka.brokers });
  });
  afterAll(async () => {
    await cluster?.stop();
    await kafka?.release();
  });
  return () => {
    if (cluster === undefined) throw new Error('the cluster did not start');
    return cluster;
  };
}
