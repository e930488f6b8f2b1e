// What every coordinator of a write needs: send commands to the meta topic or the log partitions,
// wait until this node has applied a meta command and take its own result (every node reaches the
// same), and gather a log command's result from a holder of its partition (this node first).
import { type Clock, systemClock } from '../../util/clock.js';
import { DomainError } from '../../domain/errors.js';
import type { LogCommand, MetaCommand } from '../commands/command.js';
import type { CommandApplier } from '../commands/applier.js';
import type { ClusterProducer, Produced } from '../commands/producer.js';
import { AckHold } from '../reads/cluster-ends.js';
import { fetchResult } from './result-route.js';
import type { ClusterTopic, ClusterView } from '../types.js';

export interface ClusterWritesParts {
  view: ClusterView;
  producer: Pick<ClusterProducer, 'send'>;
  /** This node's applier: its results answer for the partitions it holds and for meta. */
  applier: CommandApplier;
  /** How long a coordinator waits for an applied result (default 30 s). */
  resultWaitMs?: number;
  /** The coordinator's clock, stamped on every command (default: the system's). */
  clock?: Clock;
  /** How long an acknowledgment waits after Kafka's (reads/cluster-ends.ts; default FRESH_MS). */
  hold?: AckHold;
  /** How long a request waits for this node to apply earlier meta changes (default 10 s). */
  metaSyncMs?: number;
}

export class ClusterWrites {
  readonly metaTopic: string;
  readonly logTopic: string;
  private readonly hold: AckHold;

  constructor(private readonly parts: ClusterWritesParts) {
    this.metaTopic = `${parts.view.name}.meta`;
    this.logTopic = `${parts.view.name}.log`;
    this.hold = parts.hold ?? new AckHold();
  }

  get view(): ClusterView {
    return this.parts.view;
  }

  /** This node's meta position: log commands carry it, so holders see the schema their writer saw. */
  metaOffset(): string {
    return this.parts.view.position('meta', 0).toString();
  }

  /**
   * The time stamped on commands sent now: this node's clock, but never before the newest meta
   * command it has applied, so no command is older than the schema and keys it was written with.
   */
  stamp(): number {
    return Math.max((this.parts.clock ?? systemClock).now(), this.parts.applier.metaTime());
  }

  /**
   * Read-your-writes for schema and keys: resolves once this node has applied every meta command
   * acknowledged before the call (the meta topic's end, read now). A field created at another
   * node just before is known here after it. Bounded: past metaSyncMs, 503.
   */
  async caughtUpMeta(): Promise<void> {
    const ms = this.parts.metaSyncMs ?? 10_000;
    const end = await this.parts.view.metaEndOffset();
    if (this.parts.view.position('meta', 0) >= BigInt(end)) return;
    await this.parts.view.waitApplied('meta', 0, end, AbortSignal.timeout(ms)).catch(() => {
      throw new DomainError(
        'unavailable',
        `cluster: this node has not applied the schema and key changes acknowledged before the request (meta offset ${end}) within ${ms} ms; try again or ask another node`,
      );
    });
  }

  /** Runs a meta command: produced, applied here, answered with this node's result. */
  async meta(command: MetaCommand): Promise<unknown> {
    const stamped = { ...command, time: this.stamp() };
    const [at] = await this.parts.producer.send([{ topic: this.metaTopic, partition: 0, command: stamped }]);
    const held = this.hold.since(this.hold.now());
    const result = await this.localResult('meta', 0, at.offset);
    await held;
    return result;
  }

  /**
   * Sends log commands (one transaction when they span partitions; one time for all); answers
   * where they landed, once their acknowledgment may leave (AckHold).
   */
  async log(commands: readonly LogCommand[]): Promise<Produced[]> {
    const produced = await this.send(commands);
    await this.hold.since(this.hold.now());
    return produced;
  }

  /** log() and each command's result from a holder, the hold running beside the results. */
  async logResults(commands: readonly LogCommand[]): Promise<unknown[]> {
    const produced = await this.send(commands);
    const held = this.hold.since(this.hold.now());
    const results = await Promise.all(produced.map((at) => this.logResult(at)));
    await held;
    return results;
  }

  private send(commands: readonly LogCommand[]): Promise<Produced[]> {
    const time = this.stamp();
    return this.parts.producer.send(
      commands.map((command) => ({
        topic: this.logTopic,
        partition: command.partition,
        command: { ...command, time },
      })),
    );
  }

  /** The result of a log command from a holder of its partition (this node first). */
  async logResult(at: Produced): Promise<unknown> {
    const signal = AbortSignal.timeout(this.parts.resultWaitMs ?? 30_000);
    for (const m of this.parts.view.holders(at.partition)) {
      if (m.id === this.parts.view.self.id) {
        try {
          return await this.localResult('log', at.partition, at.offset, signal);
        } catch (err) {
          if (err instanceof DomainError && err.code === 'unavailable') continue;
          throw err;
        }
      }
      const r = await fetchResult(
        (u, i) => this.parts.view.memberFetch(u, i),
        m.url,
        'log',
        at.partition,
        at.offset,
        signal,
      );
      if (r === undefined) continue;
      if (r.ok) return r.value;
      throw r.error;
    }
    throw new DomainError(
      'unavailable',
      `cluster: the write was acknowledged by Kafka (partition ${at.partition}, offset ${at.offset}) but no holder answered its result`,
    );
  }

  private async localResult(
    topic: ClusterTopic,
    partition: number,
    offset: string,
    signal?: AbortSignal,
  ): Promise<unknown> {
    const s = signal ?? AbortSignal.timeout(this.parts.resultWaitMs ?? 30_000);
    await this.parts.view.waitApplied(topic, partition, String(BigInt(offset) + 1n), s);
    const r = this.parts.applier.results.get(topic, partition, offset);
    if (r === undefined)
      throw new DomainError('unavailable', `cluster: no result kept for ${topic}/${partition}@${offset}`);
    if (r.ok) return r.value;
    throw new DomainError(r.code as DomainError['code'], r.message);
  }
}
