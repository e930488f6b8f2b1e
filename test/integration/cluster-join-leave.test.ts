// Acceptance (issue 12): under writes and queries, a fourth node joins a three-node cluster (R=1),
// then one of the first nodes leaves with SIGTERM. No acknowledged write is lost, no query answers
// wrong (cluster-load.ts), there is no stretch in which every request fails, and GET /cluster
// shows partitions moved to the new node and away from the one that left. Clients stop sending
// to the leaving node before it is signalled, as a load balancer drains a node.
import { describe, expect, it } from 'vitest';
import { owners, clusterForFile } from '../helpers/cluster.js';
import { CheckedLoad, createLoadSchema, finalCheck, summary } from './cluster-load.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/**
 * Four clients run at once, so this many failures in a row means every client failed twice over:
 * the "window in which every request fails" the issue forbids. A handoff should fail none.
 */
const MAX_FAILURES_IN_A_ROW = 8;

describe('cluster: a node joins, then a node leaves (R=1)', () => {
  const cluster = clusterForFile({ nodes: 3, replicas: 1, partitions: 8 });

  it('moves partitions without losing a write or answering wrong', { timeout: 120_000 }, async () => {
    const c = cluster();
    await createLoadSchema(c.nodes.map((n) => n.url));
    // Clients use the nodes that were there when they started, and the joiner once it is in.
    const targets = new Set(c.nodes);
    const load = new CheckedLoad(() => [...targets].filter((n) => n.alive).map((n) => n.url));
    load.start(2, 2);
    await sleep(2_000);

    const joinedAt = Date.now();
    const joiner = await c.add({ wait: false });
    const afterJoin = await c.waitCovered({ settled: true });
    const joinMs = Date.now() - joinedAt;
    const taken = [...afterJoin.holders.keys()].filter((p) => owners(afterJoin, p, 1).includes(joiner.id));
    targets.add(joiner);
    await sleep(2_000);

    const leaver = c.nodes[0];
    targets.delete(leaver);
    const leftAt = Date.now();
    const code = await c.signal(leaver, 'SIGTERM');
    const afterLeave = await c.waitCovered({ settled: true });
    const leaveMs = Date.now() - leftAt;
    await sleep(2_000);
    await load.stop();

    console.log(
      `[cluster-join-leave] ${summary(load)}; the joiner owns partitions [${taken.join(',')}] ` +
        `(map settled ${joinMs} ms after it started); the leaver exited with ${code}, map settled ${leaveMs} ms after SIGTERM; ` +
        `longest run of failed requests: ${load.longestFailureRun()}`,
    );
    expect(load.violations, `${load.violations.join('\n')}\n${c.outputs()}`).toEqual([]);
    expect(taken.length, `GET /cluster after the join: ${JSON.stringify(afterJoin.holders)}`).toBeGreaterThan(0);
    expect(code, `the leaving node's exit code after SIGTERM\n${leaver.output().slice(-2000)}`).toBe(0);
    const stillHeld = afterLeave.holders.flatMap((h, p) => (h.includes(leaver.id) ? [p] : []));
    expect(stillHeld, 'partitions still naming the node that left').toEqual([]);
    expect(afterLeave.members.map((m) => m.id)).not.toContain(leaver.id);
    expect(load.longestFailureRun(), `requests failing in a row\n${c.outputs()}`).toBeLessThan(MAX_FAILURES_IN_A_ROW);
    const problems = await finalCheck(
      load,
      c.live().map((n) => n.url),
    );
    expect(problems, `${problems.join('\n')}\n${c.outputs()}`).toEqual([]);
  });
});
