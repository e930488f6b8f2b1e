// GET /cluster as the tests and the bench read it (docs/CLUSTER.md): the partition map one node
// holds, whether the maps of all live nodes agree and cover every partition, and removing a test
// cluster's topics from the shared broker. No server code: the bench loads it too.
import { Kafka, logLevel } from 'kafkajs';

/** A member of the partition map as GET /cluster reports it. */
export interface MapMember {
  id: string;
  url: string;
}

/** What the tests read of GET /cluster: the partition map one node holds. */
export interface ClusterMapView {
  generation: number;
  partitions: number;
  members: MapMember[];
  /** holders[p]: member ids holding log partition p, owners first. */
  holders: string[][];
  /** restoring[p]: owners still catching up on p (empty when the node does not report it). */
  restoring: string[][];
}

/**
 * GET /cluster's body → the map. The expected shape (the integrator aligns the route with it):
 * `{ name, self: {id, url}, partitions, replicas, map: { generation, partitions, members: [{id, url}],
 * holders: string[][], restoring?: string[][] } | null, … }`. Throws a clear error otherwise.
 */
export function parseClusterMap(body: string): ClusterMapView | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new Error(`GET /cluster did not answer JSON: ${body.slice(0, 300)}`);
  }
  // GET /cluster: {generation, partitions, members: [{id, url, state}], map: [{partition, holders, restoring}] | null}
  const top = json as {
    map?: unknown;
    members?: unknown;
    partitions?: unknown;
    generation?: unknown;
  } | null;
  if (top === null || typeof top !== 'object' || !('map' in top))
    throw new Error(
      `GET /cluster has no "map" (expected {members, map: [{partition, holders}]}): ${body.slice(0, 300)}`,
    );
  if (top.map === null || top.map === undefined) return undefined; // no assignment yet
  if (!Array.isArray(top.map) || !Array.isArray(top.members) || typeof top.partitions !== 'number')
    throw new Error(`GET /cluster lacks members/map/partitions: ${body.slice(0, 300)}`);
  const rows = top.map as { partition: number; holders: unknown[]; restoring?: unknown[] }[];
  const holders: string[][] = [];
  const restoring: string[][] = [];
  for (const r of rows) {
    holders[r.partition] = r.holders.map(String);
    restoring[r.partition] = (r.restoring ?? []).map(String);
  }
  return {
    generation: typeof top.generation === 'number' ? top.generation : -1,
    partitions: top.partitions,
    members: (top.members as { id: unknown; url: unknown }[]).map((x) => ({ id: String(x.id), url: String(x.url) })),
    holders,
    restoring,
  };
}

/** The first `replicas` holders of each partition: its owners. */
export function owners(map: ClusterMapView, p: number, replicas: number): string[] {
  return map.holders[p].slice(0, replicas);
}

/** One node's answer, named for messages. */
export interface NodeMap {
  node: string;
  map: ClusterMapView | undefined;
}

/**
 * Why the nodes' maps do not yet show a covered cluster, or undefined when they do: every node
 * holds a map of the same generation whose members are exactly `ids` and where every partition
 * has min(R, members) distinct owners among them; `settled` also wants no owner still restoring
 * and no handoff holder left (a join or leave has finished).
 */
export function coverageProblem(
  maps: readonly NodeMap[],
  ids: readonly string[],
  replicas: number,
  partitions: number,
  settled: boolean,
): string | undefined {
  const live = new Set(ids);
  const want = Math.min(replicas, live.size);
  if (maps.length === 0) return 'no live node';
  for (const { node, map } of maps) {
    if (map === undefined) return `${node} has no map yet`;
    if (map.partitions !== partitions) return `${node}: ${map.partitions} partitions, started with ${partitions}`;
    const members = new Set(map.members.map((m) => m.id));
    if (members.size !== live.size || [...live].some((id) => !members.has(id)))
      return `${node}: members ${[...members].join(',')} ≠ live ${[...live].join(',')}`;
    if (map.holders.length !== map.partitions) return `${node}: ${map.holders.length} holder lists`;
    for (let p = 0; p < map.partitions; p++) {
      const own = owners(map, p, want);
      if (own.length < want || new Set(own).size < want || own.some((id) => !live.has(id)))
        return `${node}: partition ${p} held by [${map.holders[p].join(',')}]`;
      if (settled && ((map.restoring[p]?.length ?? 0) > 0 || map.holders[p].length > want))
        return `${node}: partition ${p} still moving (holders [${map.holders[p].join(',')}], restoring [${(map.restoring[p] ?? []).join(',')}])`;
    }
    if (map.generation !== maps[0].map?.generation)
      return `generations differ: ${maps[0].map?.generation} at ${maps[0].node}, ${map.generation} at ${node}`;
  }
  return undefined;
}

/** Best effort: the shared broker outlives the run, so a test's topics are removed after it. */
export async function deleteClusterTopics(brokers: string[], name: string): Promise<void> {
  const topics = [`${name}.meta`, `${name}.log`];
  const admin = new Kafka({
    clientId: 'bitledger-test-cleanup',
    brokers,
    logLevel: logLevel.NOTHING,
    retry: { retries: 1 },
  }).admin();
  try {
    await admin.connect();
    const existing = new Set(await admin.listTopics());
    const gone = topics.filter((t) => existing.has(t));
    if (gone.length > 0) await admin.deleteTopics({ topics: gone, timeout: 10_000 });
  } catch {
    // a leftover topic is harmless: its name is unique to the test
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
