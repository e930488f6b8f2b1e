// GET /cluster: members, the partition map, and this node's position and lag per partition.
import type { FastifyInstance } from 'fastify';
import { sendJson } from '../http/reply.js';
import type { Jsonish } from '../encoding/json.js';
import type { ClusterRuntime } from './membership/runtime.js';
import type { WriteStages } from './commands/write-stages.js';
import { PING_PATH } from './membership/health.js';
import { GRANT_PATH, answerGrant } from './membership/grants.js';
import type { ClusterWrites } from './coordination/cluster-writes.js';
import { caughtUpHolders, clusterStatus, statusNodes } from './membership/status.js';

export function clusterHttpRoutes(
  app: FastifyInstance,
  rt: ClusterRuntime,
  stages?: WriteStages,
  writes?: Pick<ClusterWrites, 'acks'>,
): void {
  // Other members' liveness probe (membership/health.ts): answered without touching anything.
  app.get(PING_PATH, async (_req, reply) => sendJson(reply, { id: rt.member.id }));
  // A reader's request for a read grant (membership/grants.ts): { generation, ms } → { granted }.
  app.post(GRANT_PATH, async (req, reply) => sendJson(reply, answerGrant(rt.granter, req.body)));
  app.get('/cluster', async (_req, reply) => {
    const m = rt.view.map();
    const held = rt.held();
    let ends: Map<number, string> | undefined;
    let metaEnd: string | undefined;
    let endsError: string | undefined;
    try {
      ends = await rt.view.logEndOffsets(held.map((h) => h.partition));
      metaEnd = await rt.view.metaEndOffset();
    } catch (err) {
      endsError = err instanceof Error ? err.message : String(err);
    }
    const metaPos = rt.view.position('meta', 0);
    const status = clusterStatus(rt);
    return sendJson(reply, {
      name: rt.settings.name,
      self: { ...rt.member },
      state: status.state,
      ...(status.reasons.length > 0 ? { reasons: status.reasons } : {}),
      partitions: rt.settings.partitions,
      replicas: rt.settings.replicas,
      generation: m?.generation ?? null,
      members: statusNodes(rt).map((n) => ({ id: n.id, url: urlOf(rt, n.id), state: n.state })),
      map:
        m === undefined
          ? null
          : m.holders.map((h, p) => ({
              partition: p,
              holders: [...h],
              restoring: [...(m.restoring?.[p] ?? [])],
              caughtUp: caughtUpHolders(rt, m, p),
            })),
      node: {
        meta: { position: String(metaPos), end: metaEnd ?? null, lag: lag(metaEnd, metaPos) },
        partitions: heldFigures(rt, held, ends),
        // Shared refreshes of the ends reads wait for (reads/cluster-ends.ts): per query, the bench's figure.
        readEndsRefreshes: rt.view.endsRefreshes,
        // Every round of them sent, the background keeper's included.
        readEndsRounds: rt.view.endsRounds,
        ...grantFigures(rt, writes),
        // Where writes' time went at this node, as coordinator and as holder (commands/write-stages.ts).
        ...(stages === undefined ? {} : { writeStages: stages.snapshot() }),
        // Partitions taken over from another holder's snapshot (membership/takeover.ts).
        takeovers: rt.takeover.done.map((t) => ({ ...t })),
        ...(endsError !== undefined ? { endOffsetsError: endsError } : {}),
        ...(rt.lastError !== undefined ? { lastError: rt.lastError } : {}),
      },
    });
  });
}

type Held = ReturnType<ClusterRuntime['held']>;

/** Per partition this node holds: position, end and lag, and the stages of its takeover. */
function heldFigures(rt: ClusterRuntime, held: Held, ends: Map<number, string> | undefined): Jsonish[] {
  return held.map((h) => {
    const pos = rt.view.position('log', h.partition);
    const end = ends?.get(h.partition);
    return {
      partition: h.partition,
      caughtUp: h.caughtUp,
      position: String(pos),
      end: end ?? null,
      lag: lag(end, pos),
      // From this node's assignment of the partition until it caught up (a takeover's cost).
      ...(h.catchUpMs === undefined ? {} : { catchUpMs: Math.round(h.catchUpMs) }),
      // Its stages: the partition map known, the partition resumed after a takeover (or none).
      ...(h.mappedMs === undefined ? {} : { mappedMs: Math.round(h.mappedMs) }),
      ...(h.resumedMs === undefined ? {} : { resumedMs: Math.round(h.resumedMs) }),
    };
  });
}

/**
 * Read grants (membership/grants.ts): given and refused by this node, whether a log write
 * acknowledged now would be held; asked and received by its reads, chains valid now, reads that had
 * none from every member. Then log acknowledgments held FRESH_MS and let go at once.
 */
function grantFigures(rt: ClusterRuntime, writes?: Pick<ClusterWrites, 'acks'>): Record<string, Jsonish> {
  return {
    grants: {
      given: rt.granter.given,
      refused: rt.granter.refused,
      holdsNow: rt.granter.holdsNow(),
      asked: rt.readGrants.asked,
      received: rt.readGrants.granted,
      holding: rt.readGrants.holding(),
      readsWithout: rt.view.readsUngranted,
    },
    ...(writes === undefined ? {} : { acks: writes.acks() }),
  };
}

const lag = (end: string | undefined, pos: bigint): number | null =>
  end === undefined ? null : Math.max(0, Number(BigInt(end) - pos));

const urlOf = (rt: ClusterRuntime, id: string): string =>
  id === rt.member.id ? rt.member.url : (rt.view.map()?.members.find((x) => x.id === id)?.url ?? '');
