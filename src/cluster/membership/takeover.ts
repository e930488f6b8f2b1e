// Takeover from snapshots (docs/CLUSTER.md, "Takeover"): a node that is given a log partition asks
// a live holder of it for its snapshot of the partition (commands/partition-snapshot.ts), installs
// it, and reads the topic on from the position it covers, so taking a partition over costs its
// size, not its history. The holder captures the snapshot from its applied state when asked: the
// newest it has, streamed in pieces encoded as they are sent. Without a holder that answers, the node reads the topic from its own position.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Engine } from '../../engine/engine.js';
import { DomainError, badRequest } from '../../domain/errors.js';
import { Readable } from 'node:stream';
import { capturePartitionPieces, markedPosition } from '../commands/partition-snapshot.js';
import { decodePartStream } from '../../engine/snapshot-part.js';
import type { Event } from '../../events/types.js';
import type { ClusterView } from '../types.js';
import { systemClock } from '../../util/clock.js';

export const SNAPSHOT_PATH = '/internal/cluster/snapshot';

/**
 * A snapshot is taken when it covers at least this many offsets more than the node has applied
 * (or the node has applied none): a node back after a short absence reads the few commands it
 * missed instead of copying the whole partition.
 */
export const TAKEOVER_MIN_OFFSETS = 32n;

/** A holder that has not begun to answer by then (stopped, overloaded) is passed over. */
const ANSWER_MS = 5_000;
/** The whole transfer of a large partition. */
const FETCH_MS = 120_000;

/** A takeover this node made: the partition, the holder it came from, the position it starts at. */
export interface TakenOver {
  partition: number;
  holder: string;
  next: string;
  bytes: number;
  /**
   * Where its time went, ms: until the holder's answer began (its capture included), the body's
   * transfer (the holder encodes as it sends, this node decodes as it arrives), and the install
   * (meta wait, one commit).
   */
  answerMs: number;
  transferMs: number;
  installMs: number;
  /**
   * This process's CPU time over the three (the receive and the install, with whatever else the
   * node ran meanwhile): on a shared machine it moves far less with the load than the times do.
   */
  cpuMs: number;
}

export class Takeover {
  /** The last takeovers from snapshots, newest last (GET /cluster). */
  readonly done: TakenOver[] = [];

  constructor(
    private readonly view: ClusterView,
    private readonly install: (partition: number, events: Iterable<Event>) => Promise<bigint | undefined>,
    private readonly logger: Logger,
  ) {}

  /** Installs the first snapshot a live holder gives; undefined when none was newer or none answered. */
  async run(partition: number): Promise<bigint | undefined> {
    const from = this.view.position('log', partition);
    for (const m of this.view.holders(partition)) {
      if (m.id === this.view.self.id) continue;
      const url = `${m.url}${SNAPSHOT_PATH}?partition=${partition}&after=${from}`;
      let body: { events: Event[]; bytes: number };
      const t0 = systemClock.monotonic();
      const cpu0 = process.cpuUsage();
      let t1 = t0;
      try {
        const res = await this.fetch(url);
        t1 = systemClock.monotonic();
        if (res.status === 204) return undefined; // not far enough ahead of this node to be worth it
        if (!res.ok) {
          this.logger.debug({ partition, holder: m.id, status: res.status }, 'cluster: no snapshot from this holder');
          await res.body?.cancel();
          continue;
        }
        // Decoded record by record as it arrives: the body is never held whole beside its pieces.
        if (res.body === null) throw new Error('a snapshot answer without a body');
        body = await decodePartStream(res.body);
      } catch (err) {
        this.logger.debug({ partition, holder: m.id, err: String(err) }, 'cluster: no snapshot from this holder');
        continue;
      }
      const t2 = systemClock.monotonic();
      const next = await this.install(partition, body.events);
      if (next === undefined) return undefined;
      const taken: TakenOver = {
        partition,
        holder: m.id,
        next: String(next),
        bytes: body.bytes,
        answerMs: Math.round(t1 - t0),
        transferMs: Math.round(t2 - t1),
        installMs: Math.round(systemClock.monotonic() - t2),
        cpuMs: cpuMsSince(cpu0),
      };
      this.done.push(taken);
      if (this.done.length > 64) this.done.shift();
      this.logger.info({ ...taken, from: String(from) }, 'cluster: took a partition over from a snapshot');
      return next;
    }
    return undefined;
  }

  /** The holder's answer, given up when its headers are not there within ANSWER_MS. */
  private async fetch(url: string): Promise<Response> {
    const started = new AbortController();
    const timer = systemClock.setTimeout(() => started.abort(new Error('no answer')), ANSWER_MS, { unref: true });
    try {
      return await this.view.memberFetch(url, {
        signal: AbortSignal.any([started.signal, AbortSignal.timeout(FETCH_MS)]),
      });
    } finally {
      timer.cancel();
    }
  }
}

/** GET /internal/cluster/snapshot?partition=p&after=n: this node's snapshot of a partition it holds caught up. */
export function takeoverRoutes(
  app: FastifyInstance,
  parts: { engine: Engine; view: ClusterView; holdsCaughtUp(partition: number): boolean },
): void {
  app.get(SNAPSHOT_PATH, async (req, reply) => {
    const q = req.query as Record<string, string | undefined>;
    const partition = Number(q.partition);
    const after = /^\d+$/.test(q.after ?? '') ? BigInt(q.after ?? '0') : undefined;
    if (!Number.isInteger(partition) || partition < 0 || partition >= parts.view.partitions || after === undefined)
      throw badRequest('snapshot: partition and after (an offset) are required');
    if (!parts.holdsCaughtUp(partition))
      throw new DomainError('unavailable', `node ${parts.view.self.id} does not hold partition ${partition} caught up`);
    // Captured here, at one moment of the applied state; encoded and sent a piece at a time as
    // the connection takes them (a partition of millions of bits is never one body in memory).
    const pieces = parts.engine.peekApplied((h) => {
      const at = markedPosition(h, partition);
      if (at === undefined || (after > 0n && at.next - after < TAKEOVER_MIN_OFFSETS)) return undefined;
      return capturePartitionPieces(h, partition, (i, s) => parts.view.partitionOf(i, s));
    });
    if (pieces === undefined) return reply.code(204).send();
    return reply.type('application/octet-stream').send(Readable.from(pieces, { objectMode: false }));
  });
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return Math.round((d.user + d.system) / 1000);
}
