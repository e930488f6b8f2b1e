// What every coordinator of a write needs: send commands to the meta topic or the log partitions,
// wait until this node has applied a meta command and take its own result (every node reaches the
// same), and gather a log command's result from a holder of its partition (this node first).
import { type Clock, systemClock } from '../../util/clock.js';
import { DomainError } from '../../domain/errors.js';
import type { LogCommand, MetaCommand } from '../commands/command.js';
import type { CommandApplier } from '../commands/applier.js';
import type { ClusterProducer, Produced } from '../commands/producer.js';
import { AckHold } from '../reads/cluster-ends.js';
import { WriteStages } from '../commands/write-stages.js';
import { fetchResult } from './result-route.js';
import { OPEN_GATE } from '../membership/broker-watch.js';
import type { ClusterTopic, ClusterView, KafkaGate } from '../types.js';

/** How soon a write asks again when no holder of its partition could answer its result. */
const ASK_AGAIN_MS = 50;

type Outcome = { ok: true; value: unknown } | { ok: false; error: DomainError };

export interface ClusterWritesParts {
  view: ClusterView;
  producer: Pick<ClusterProducer, 'send'>;
  /** This node's applier: its results answer for the partitions it holds and for meta. */
  applier: CommandApplier;
  /** How long a coordinator waits for an applied result (default 30 s). */
  resultWaitMs?: number;
  /** The coordinator's clock, stamped on every command (default: the system's). */
  clock?: Clock;
  /** The broker watch: Kafka steps answer 503 with one sentence while the broker is unreachable. */
  gate?: KafkaGate;
  /** How long an acknowledgment waits after Kafka's (reads/cluster-ends.ts; default FRESH_MS). */
  hold?: AckHold;
  /** How long a request waits for this node to apply earlier meta changes (default 10 s). */
  metaSyncMs?: number;
  /** Where writes' time goes (GET /cluster's writeStages), shared with the applier. */
  stages?: WriteStages;
}

export class ClusterWrites {
  readonly metaTopic: string;
  readonly logTopic: string;
  private readonly hold: AckHold;
  readonly stages: WriteStages;

  constructor(private readonly parts: ClusterWritesParts) {
    this.metaTopic = `${parts.view.name}.meta`;
    this.logTopic = `${parts.view.name}.log`;
    this.hold = parts.hold ?? new AckHold();
    this.stages = parts.stages ?? new WriteStages();
  }

  get view(): ClusterView {
    return this.parts.view;
  }

  private get gate(): KafkaGate {
    return this.parts.gate ?? OPEN_GATE;
  }

  private get clock(): Clock {
    return this.parts.clock ?? systemClock;
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
    return Math.max(this.clock.now(), this.parts.applier.metaTime());
  }

  /**
   * Read-your-writes for schema and keys: resolves once this node has applied every meta command
   * acknowledged before the call (the meta end of a refresh sent after the call less FRESH_MS,
   * reads/cluster-ends.ts forMeta: the acknowledgment hold makes it cover every meta command
   * acknowledged before the call; a read's refresh young enough serves, else one of the meta
   * topic alone). A field created at another node just before is known here after it. Bounded:
   * past metaSyncMs, 503.
   */
  async caughtUpMeta(): Promise<void> {
    const ms = this.parts.metaSyncMs ?? 10_000;
    const arrived = systemClock.monotonic();
    const end = await this.gate.through(() => this.parts.view.metaEndForWrite(arrived));
    this.stages.add('metaEnds', systemClock.monotonic() - arrived);
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
    const [at] = await this.gate.through(() =>
      this.parts.producer.send([{ topic: this.metaTopic, partition: 0, command: stamped }]),
    );
    const held = this.hold.since(this.hold.now());
    const result = await this.gate.through(() => this.localResult('meta', 0, at.offset), unapplied(at));
    await held;
    return result;
  }

  /**
   * Sends log commands (one transaction when they span partitions; one time for all); answers
   * where they landed, once their acknowledgment may leave (AckHold.logAfter: held while this
   * node granted reads, membership/grants.ts).
   */
  async log(commands: readonly LogCommand[]): Promise<Produced[]> {
    const produced = await this.send(commands);
    return this.hold.logAfter(this.hold.now(), oneMessage(produced), Promise.resolve(produced));
  }

  /** Log acknowledgments held FRESH_MS and let go at once (GET /cluster). */
  acks(): { held: number; unheld: number } {
    return { held: this.hold.held, unheld: this.hold.unheld };
  }

  /** log() and each command's result from a holder, the hold running beside the results. */
  async logResults(commands: readonly LogCommand[]): Promise<unknown[]> {
    const sent = this.stages.now();
    const own = commands.length === 1 && this.ownsCaughtUp(commands[0].partition);
    // Before the send: this node's consumer must not apply the command ahead of its own apply.
    const settle = own ? this.parts.view.ownSending?.(commands[0].partition) : undefined;
    try {
      const sending = this.send(commands);
      // One command, which this node will apply from its own bytes: its import body is decoded
      // meanwhile, while Kafka takes it (only a single command goes as one message).
      const decodedBody = own ? this.parts.applier.predecode(commands[0]) : undefined;
      const produced = (await sending).map((at) =>
        at.message === undefined || decodedBody === undefined ? at : { ...at, message: { ...at.message, decodedBody } },
      );
      const acked = this.stages.now();
      this.stages.add('produce', acked - sent);
      return await this.hold.logAfter(
        this.hold.now(),
        oneMessage(produced),
        Promise.all(produced.map((at) => this.logResult(at, acked, settle))),
      );
    } finally {
      settle?.();
    }
  }

  private send(commands: readonly LogCommand[]): Promise<Produced[]> {
    const time = this.stamp();
    return this.gate.through(() =>
      this.parts.producer.send(
        commands.map((command) => ({
          topic: this.logTopic,
          partition: command.partition,
          command: { ...command, time },
        })),
      ),
    );
  }

  /**
   * The result of a log command from the first holder of its partition to answer: this node's
   * own apply when it holds the partition caught up, else every holder asked at once, so a
   * stopped holder delays nothing. The command is in Kafka, so some holder will apply it: while
   * none can answer yet (a node just restarted has no map; holders still catching up) it asks
   * again, until the wait ends. `ownTried` is called once this node's own apply was tried.
   */
  logResult(at: Produced, acked = this.stages.now(), ownTried?: () => void): Promise<unknown> {
    const signal = AbortSignal.timeout(this.parts.resultWaitMs ?? 30_000);
    return this.gate.through(async () => {
      await this.applyOwn(at, acked).finally(ownTried);
      for (;;) {
        const r = await this.firstAnswer(at, signal, acked);
        if (r !== undefined) {
          if (r.ok) return r.value;
          throw r.error;
        }
        if (signal.aborted) throw new DomainError('unavailable', noHolderAnswered(at));
        await this.clock.sleep(ASK_AGAIN_MS);
      }
    }, unapplied(at));
  }

  /**
   * A command sent as one message, by a caught-up holder of its partition: applied here from the
   * bytes sent, once everything before its offset is (ClusterView.applyOwn), sparing the fetch
   * back from Kafka; the result is then this node's own. Otherwise, or when it fails, the
   * consumer delivers it as any other.
   */
  private async applyOwn(at: Produced, acked: number): Promise<void> {
    const view = this.parts.view;
    if (at.message === undefined || view.applyOwn === undefined || !this.ownsCaughtUp(at.partition)) return;
    const applied = await view.applyOwn(at.partition, at.message).catch(() => false);
    if (applied) this.stages.add('ownApply', this.stages.now() - acked);
  }

  /** Whether this node holds the partition caught up and can apply what it sends from its own bytes. */
  private ownsCaughtUp(partition: number): boolean {
    const view = this.parts.view;
    return view.applyOwn !== undefined && view.holders(partition)[0]?.id === view.self.id;
  }

  /** One round: this node alone when it is a caught-up holder, else every holder together. */
  private async firstAnswer(at: Produced, signal: AbortSignal, acked: number): Promise<Outcome | undefined> {
    const view = this.parts.view;
    const holders = view.holders(at.partition);
    const selfId = view.self.id;
    if (holders[0]?.id === selfId) {
      const mine = await this.localOutcome(at, signal);
      if (mine !== undefined) {
        this.timeLocal(at, acked);
        return mine;
      }
    }
    const round = new AbortController();
    const both = AbortSignal.any([signal, round.signal]);
    try {
      const r = await firstDefined(
        holders.map((m) =>
          m.id === selfId
            ? this.localOutcome(at, both)
            : fetchResult((u, i) => view.memberFetch(u, i), m.url, 'log', at.partition, at.offset, both),
        ),
      );
      if (r !== undefined) this.stages.add('resultRemote', this.stages.now() - acked);
      return r;
    } finally {
      round.abort();
    }
  }

  /** The stages of a result this node gave itself: the delivery to its applier, and the whole wait. */
  private timeLocal(at: Produced, acked: number): void {
    const now = this.stages.now();
    this.stages.add('resultLocal', now - acked);
    const began = this.stages.appliedFrom(at.partition, at.offset);
    if (began !== undefined) this.stages.add('delivery', Math.max(0, began - acked));
  }

  /** This node's own result of a log command; undefined when it cannot give one (not held, not kept, gave up). */
  private async localOutcome(at: Produced, signal: AbortSignal): Promise<Outcome | undefined> {
    try {
      return { ok: true, value: await this.localResult('log', at.partition, at.offset, signal) };
    } catch (err) {
      if (err instanceof DomainError && err.code !== 'unavailable') return { ok: false, error: err };
      return undefined;
    }
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

/** Whether the write went as one message, not a transaction (AckHold.logAfter). */
function oneMessage(produced: readonly Produced[]): boolean {
  return produced.length === 1 && produced[0].message !== undefined;
}

/** The first answer that is not undefined; undefined once every one is (or failed). */
function firstDefined<T>(asks: readonly Promise<T | undefined>[]): Promise<T | undefined> {
  return new Promise((resolve) => {
    let left = asks.length;
    if (left === 0) resolve(undefined);
    const none = (): void => {
      if (--left === 0) resolve(undefined);
    };
    for (const a of asks) a.then((v) => (v === undefined ? none() : resolve(v)), none);
  });
}

function noHolderAnswered(at: Produced): string {
  return `cluster: the write was acknowledged by Kafka (partition ${at.partition}, offset ${at.offset}) but no holder answered its result in time; it is applied as holders reach it`;
}

/** A write in Kafka whose result could not be had because Kafka stopped answering. */
function unapplied(at: Produced): string {
  return `cluster: the write was acknowledged by Kafka (${at.topic} partition ${at.partition}, offset ${at.offset}) but Kafka stopped answering before this node had its result; it is applied once the broker is back`;
}
