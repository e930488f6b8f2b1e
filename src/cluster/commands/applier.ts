// The holder side of the write path (CommandSink): the consumer hands it each partition's
// messages in offset order; it reassembles chunks, decodes each command and runs it through this
// node's own services — SchemaService, the query write path, ImportService — so every change goes
// through Engine.commit → apply() exactly as on one node. Each command's commit carries the
// partition's position (CommitContext: cursors, origin 'cluster'), so the position becomes
// durable in the command's own group: a restart replays the local log and resumes after the last
// command it holds, never applying one twice.
//
// Those commits are written without an fsync of their own (ApplierOptions.syncCommits): the command's
// durability is Kafka's (acks=all) before anyone waits for its apply, its position rides in the
// same LevelDB batch as its events (a log cut short by a power cut is a consistent prefix,
// resumed from its own position), answers are re-derived by the replay, and the log is synced
// within a second after (storage/event-log.ts) and before every snapshot. A takeover's install
// is synced: its snapshot came from another node, not from the topic.
//
// A command that fails with a 4xx DomainError fails the same way on every holder (same state,
// same command): it is recorded as failed and skipped. Anything else stops the sink loudly
// (deliver rejects, nothing of that command is staged).
import type { Event } from '../../events/types.js';
import type { Logger } from 'pino';
import { DomainError, badRequest } from '../../domain/errors.js';
import { fieldNotFoundNamed, indexNotFoundNamed } from '../../domain/messages.js';
import type { Engine } from '../../engine/engine.js';
import type { CommitContext, CursorWrite } from '../../engine/ports.js';
import { type ImportRequest, decodeImportRequest, decodeImportValueRequest } from '../../encoding/import-request.js';
import { statusOf } from '../../http/errors.js';
import type { ImportService } from '../../service/import/import-service.js';
import type { BitsImport } from '../../service/import/import-types.js';
import { prepareBits } from '../../service/import/prepare-bits.js';
import { rewriteLegacyQuery } from '../../service/legacy/legacy-query.js';
import { checkLegacyRelease, isLegacyRelease } from '../../service/legacy/legacy-release.js';
import { hasLegacyCall } from '../../pql/legacy.js';
import { commandMarkKey } from '../../state/holder.js';
import { parseQuery } from '../../service/query-service.js';
import { runQuery } from '../../service/query/index.js';
import type { SchemaService } from '../../service/schema-service.js';
import { FrameService } from '../../service/legacy/frame-service.js';
import { InputService } from '../../service/legacy/input-service.js';
import { assignKeys } from '../../service/write-model/keys.js';
import { LIMITS } from '../../config/limits.js';
import { decideDefine, decideDelete, decideOffsets, decideRunning } from '../../kafka/ingest-decide.js';
import type { Command, CommandResult, FrameOp, LogCommand, MetaCommand, SchemaOp } from './command.js';
import { type AssembledCommand, CommandAssembler, decodeCommand } from './command-codec.js';
import { markImportExistence, markSetExistence, namesAny, newerThan } from './incarnations.js';
import { decideInstall, installedMark, readPartitionSnapshot } from './partition-snapshot.js';
import { decodeStoredPosition, encodePosition, positionText } from './position.js';
import { Positions } from './positions.js';
import { CommandResults } from './results.js';
import type { WriteStages } from './write-stages.js';
import type { PrepareThread } from './import-prepare-thread.js';
import { type ClusterMessage, type ClusterTopic, type CommandSink, type DecodedBody, positionKey } from '../types.js';

export interface ApplierParts {
  engine: Engine;
  schema: SchemaService;
  imports: ImportService;
  /** The fixed shard → partition function (ClusterView.partitionOf). */
  partitionOf(index: string, shard: number): number;
  logger: Logger;
  /** Where log commands' time goes (GET /cluster's writeStages). */
  stages?: WriteStages;
  /** Where predecode builds a large bits import's events (beside kafkajs); on this thread when absent. */
  prepareThread?: PrepareThread;
}

export interface ApplierOptions {
  /**
   * Resolves once this node has applied the meta topic up to `next`. Default: the applier's own
   * meta position (it applies the meta topic too); the integrator may pass ClusterView.waitApplied.
   */
  waitMeta?: (next: string, signal: AbortSignal) => Promise<void>;
  /** How long a log command waits for the meta position it needs (default 30 s). */
  metaWaitMs?: number;
  /** Results kept for the coordinators (default 20 000 commands). */
  resultsKept?: number;
  /**
   * Whether the commits of commands read from the topics (and of positions alone) are synced per
   * the node's --fsync policy. Default false, as the file's head says: a restart after a power
   * cut resumes from the position the log kept and reads the rest from the topic again. true on a
   * node that mirrors its log (--kafka-mirror-topic): the mirror publishes what was written, and
   * a power cut must not take back records it published.
   */
  syncCommits?: boolean;
  /**
   * Restores to a time: a partition's commands are applied up to its first command stamped after
   * this (ms), which closes the partition — as a time-travel read sees it (engine/command-time.ts).
   */
  until?: number;
}

/** How a PQL command runs: its coordinator's time and release, and the shards it may change. */
interface PqlRun {
  now: number;
  /** The coordinator's meta position (log commands): what it wrote to is the incarnation before it. */
  metaOffset?: string;
  release?: string;
  shards?: number[];
  only?: (shard: number) => boolean;
}

/** The command's time: its own stamp, or (written before stamps) its Kafka message's timestamp. */
function commandTime(cmd: Command, a: AssembledCommand): number {
  if (cmd.time !== undefined) return cmd.time;
  const t = Number(a.timestamp);
  if (!Number.isFinite(t)) throw new Error('cluster: a command without a time, and its message without a timestamp');
  return t;
}

/** The columns of a bits or values import command. */
function decodeImportColumns(cmd: Extract<LogCommand, { kind: 'import' }>): {
  columnIds: ArrayLike<number | bigint>;
  columnKeys: string[];
} {
  return cmd.format === 'bits' ? decodeImportRequest(cmd.body) : decodeImportValueRequest(cmd.body);
}

/**
 * How long the events built during a produce run before they yield: Kafka's acknowledgment
 * waits behind a stretch, and the ack's hold (reads/cluster-ends.ts) starts only when it is
 * handled (runStepsYielding's default stretch is 5 ms).
 */
const AHEAD_SLICE_MS = 1;

/** A log command whose meta offset this node did not reach in time: deliver it again later. */
export class MetaBehindError extends Error {
  override name = 'MetaBehindError';
}

export class CommandApplier implements CommandSink {
  readonly results: CommandResults;
  /** Called after an ingest meta command is applied here (cluster/ingest starts and stops runners). */
  readonly ingestListeners: ((name: string) => void)[] = [];
  private readonly assemblers = new Map<string, CommandAssembler>();
  /** Durable positions (the next offset to apply), with their waits (positions.ts). */
  private readonly positions = new Positions();
  /** Partitions whose stored position was read (load). */
  private readonly loaded = new Set<string>();
  /** Per partition: last offsets of commands applied beyond the durable position (position.ts). */
  private readonly appliedAfter = new Map<string, Set<bigint>>();
  private readonly metaWaitMs: number;
  /** Partitions closed by `until`: nothing more of them is applied. */
  private readonly closed = new Set<string>();
  private readonly until: number | undefined;
  private readonly waitMeta: (next: string, signal: AbortSignal) => Promise<void>;
  private readonly frames: FrameService;
  private readonly inputs: InputService;
  private readonly syncCommits: boolean;

  constructor(
    private readonly parts: ApplierParts,
    opts: ApplierOptions = {},
  ) {
    this.results = new CommandResults(opts.resultsKept ?? 20_000);
    this.metaWaitMs = opts.metaWaitMs ?? 30_000;
    this.syncCommits = opts.syncCommits ?? false;
    this.until = opts.until;
    this.waitMeta = opts.waitMeta ?? ((next, signal) => this.waitApplied('meta', 0, next, signal));
    this.frames = new FrameService(parts.engine);
    this.inputs = new InputService(parts.engine, parts.imports);
  }

  /** Reads the durable positions of these partitions (call once at start, before any deliver). */
  async load(topic: ClusterTopic, partitions: readonly number[]): Promise<void> {
    for (const p of partitions) {
      const key = positionKey(topic, p);
      const stored = decodeStoredPosition(await this.parts.engine.cursors.get(key), key);
      this.appliedAfter.set(`${topic}/${p}`, new Set(stored.appliedAfter));
      this.setPosition(topic, p, stored.next);
    }
  }

  /** Whether `until` closed the partition (a restore to a time applies nothing more of it). */
  isClosed(topic: ClusterTopic, partition: number): boolean {
    return this.closed.has(`${topic}/${partition}`);
  }

  /** The newest time stamped on a meta command applied here (0: none yet). */
  metaTime(): number {
    return this.parts.engine.peekApplied((h) => h.commandMarks.get(commandMarkKey('meta', 0))?.maxMs ?? 0);
  }

  /** Next offset this node will apply of a partition (undefined: never delivered nor loaded). */
  position(topic: ClusterTopic, partition: number): bigint | undefined {
    return this.loaded.has(`${topic}/${partition}`) ? this.positions.get(topic, partition) : undefined;
  }

  /** Resolves once the partition's position is at least `next`; rejects when `signal` aborts. */
  waitApplied(topic: ClusterTopic, partition: number, next: string, signal?: AbortSignal): Promise<void> {
    return this.positions.wait(topic, partition, BigInt(next), signal);
  }

  async deliver(
    topic: ClusterTopic,
    partition: number,
    messages: readonly ClusterMessage[],
    next: string,
  ): Promise<void> {
    const key = `${topic}/${partition}`;
    if (!this.loaded.has(key)) await this.load(topic, [partition]);
    let asm = this.assemblers.get(key);
    if (asm === undefined) this.assemblers.set(key, (asm = new CommandAssembler()));
    for (const msg of messages) {
      // A consumer that resumes from an older offset (Kafka's own, a rebalance) re-sends what is
      // applied already: the durable position says so, and those messages are skipped.
      if (BigInt(msg.offset) < this.positions.get(topic, partition)) continue;
      const whole = asm.push(msg);
      // A whole command from one message is that message's: its body may come decoded (Feed.own).
      if (whole !== undefined) await this.applyOne(topic, partition, whole, asm.pendingFrom, msg.decodedBody);
    }
    // What follows the last command (transaction markers, the first chunks of a command still
    // incomplete) moves the position too, but never past a command not yet applied.
    const pending = asm.pendingFrom;
    const target = pending === undefined ? BigInt(next) : BigInt(pending);
    if (target > this.positions.get(topic, partition)) {
      const kept = this.keptAfter(key, target);
      await this.commitPosition([{ key: positionKey(topic, partition), value: encodePosition(target, kept) }]);
      this.appliedAfter.set(key, new Set(kept));
      this.setPosition(topic, partition, target);
    }
  }

  /**
   * Takeover from a snapshot (partition-snapshot.ts): installs another holder's snapshot of a log
   * partition in one commit — with its position and a CommandApplied marking it installed — when
   * it covers more than this node has applied; the partition is then read on from its position.
   * Returns the new position, or undefined when the snapshot was not newer. The caller keeps
   * deliveries of the partition away meanwhile (Feed.exclusive).
   */
  async install(partition: number, events: Iterable<Event>): Promise<bigint | undefined> {
    const key = `log/${partition}`;
    if (!this.loaded.has(key)) await this.load('log', [partition]);
    const snap = readPartitionSnapshot(events, partition);
    if (snap.position.next <= this.positions.get('log', partition)) return undefined;
    // The snapshot's fields exist here once meta is applied as far as the holder had.
    await this.waitMeta(String(snap.metaNext), AbortSignal.timeout(this.metaWaitMs));
    const cursors = [{ key: positionKey('log', partition), value: Buffer.from(snap.positionText, 'utf8') }];
    await this.parts.engine.commit({
      cursors,
      origin: 'cluster',
      // Synced: the snapshot is another holder's, and the topic may no longer start where it does.
      sync: true,
      applied: installedMark(partition, snap),
      decide: (h, sink) => decideInstall(h, sink, snap, partition, this.parts.partitionOf),
    });
    this.assemblers.delete(key);
    this.appliedAfter.set(key, new Set(snap.position.appliedAfter));
    this.setPosition('log', partition, snap.position.next);
    return snap.position.next;
  }

  /** Commands applied at or beyond `target` (to skip when a restart re-reads from it). */
  private keptAfter(key: string, target: bigint, also?: bigint): bigint[] {
    const kept = [...(this.appliedAfter.get(key) ?? [])].filter((o) => o >= target);
    if (also !== undefined && also >= target && !kept.includes(also)) kept.push(also);
    return kept.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /**
   * Applies one assembled command, its position staged in the same write: the next offset, or
   * the first chunk of a command still in assembly (`pendingFrom`) with this one listed as
   * applied beyond it. A command listed so (applied before a restart) is not applied again.
   */
  private async applyOne(
    topic: ClusterTopic,
    partition: number,
    a: AssembledCommand,
    pendingFrom: string | undefined,
    decodedBody?: Promise<DecodedBody>,
  ): Promise<void> {
    const key = `${topic}/${partition}`;
    const last = BigInt(a.lastOffset);
    const after = pendingFrom !== undefined && BigInt(pendingFrom) < last + 1n ? BigInt(pendingFrom) : last + 1n;
    const kept = this.keptAfter(key, after, last);
    const cursors = [{ key: positionKey(topic, partition), value: encodePosition(after, kept) }];
    if (this.appliedAfter.get(key)?.has(last) === true) {
      await this.commitPosition(cursors);
      this.appliedAfter.set(key, new Set(kept));
      this.setPosition(topic, partition, after);
      return;
    }
    const where = `${topic}/${partition}@${a.lastOffset}`;
    const cmd = decodeCommand(a.value, where);
    const time = commandTime(cmd, a);
    if (this.until !== undefined && (this.closed.has(key) || time > this.until)) {
      this.closed.add(key);
      return;
    }
    if (cmd.kind === 'pql' || cmd.kind === 'import') await this.metaReached(cmd, where);
    const applied = {
      type: 'CommandApplied',
      topic,
      partition,
      offset: a.lastOffset,
      position: positionText({ next: after, appliedAfter: kept }),
      timeMs: time,
    } as const;
    const stages = topic === 'log' ? this.parts.stages : undefined;
    const began = stages?.applying(partition, a.lastOffset, time);
    let result: CommandResult;
    try {
      // Every command ends in one commit, which carries the position and the command's
      // CommandApplied (a success with no events too: they go in a group of their own).
      const ctx: CommitContext = { cursors, origin: 'cluster', applied, sync: this.syncCommits };
      result = { ok: true, value: await this.run(cmd, time, ctx, decodedBody) };
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
      result = { ok: false, status: statusOf(err), code: err.code, message: err.message };
      this.parts.logger.debug({ command: where, err: err.message }, 'cluster command failed (as on every holder)');
      // A refused command committed nothing (a DomainError means so): its position moves alone,
      // with its CommandApplied (it was applied: as a refusal, on every holder alike).
      await this.commitPosition(cursors, applied);
    }
    if (stages !== undefined && began !== undefined) stages.add('apply', stages.now() - began);
    this.results.set(topic, partition, a.lastOffset, result);
    this.appliedAfter.set(key, new Set(kept));
    this.setPosition(topic, partition, after);
  }

  private async metaReached(cmd: LogCommand, where: string): Promise<void> {
    try {
      await this.waitMeta(cmd.metaOffset, AbortSignal.timeout(this.metaWaitMs));
    } catch {
      throw new MetaBehindError(
        `cluster: log command ${where} needs the meta topic applied up to ${cmd.metaOffset}; not reached within ${this.metaWaitMs} ms`,
      );
    }
  }

  /** A position alone (a command applied before, markers, a refused command). */
  private commitPosition(cursors: readonly CursorWrite[], applied?: CommitContext['applied']): Promise<void> {
    const ctx = { cursors, origin: 'cluster', sync: this.syncCommits } as const;
    return this.parts.engine.commit({ ...ctx, ...(applied === undefined ? {} : { applied }) });
  }

  /**
   * Runs a command through the services at its coordinator's time (`now`: nothing here reads this
   * node's clock); `ctx` goes to the one commit it makes.
   */
  private run(cmd: Command, now: number, ctx: CommitContext, decodedBody?: Promise<DecodedBody>): Promise<unknown> {
    switch (cmd.kind) {
      case 'schema':
        return this.runSchema(cmd.schema, ctx).then(() => null);
      case 'frame':
        return this.runFrame(cmd.frame, ctx).then(() => null);
      case 'keys':
        return this.runKeys(cmd, ctx);
      case 'attrs':
        return this.runPql(cmd.index, cmd.pql, { now }, ctx);
      case 'pql': {
        const { index, partition } = cmd;
        const only = (s: number): boolean => this.parts.partitionOf(index, s) === partition;
        const run = { now, release: cmd.release ?? '', shards: cmd.shards, only, metaOffset: cmd.metaOffset };
        return this.runPql(index, cmd.pql, run, ctx);
      }
      case 'import':
        return this.runImport(cmd, ctx, decodedBody).then(() => null);
      case 'ingest':
        return this.runIngest(cmd, ctx).then(() => null);
      case 'ingestOffsets': {
        const { name, topic, partitions, offsets, records, deadLettered } = cmd;
        const batch = { ingest: name, topic, partitions, offsets, records, deadLettered };
        return this.parts.engine
          .commit({ ...ctx, decide: (h, sink) => decideOffsets(h, sink, batch) })
          .then(() => null);
      }
    }
  }

  /** An ingest changed on every node; this node's runners follow (ingestListeners). */
  private async runIngest(cmd: Extract<MetaCommand, { kind: 'ingest' }>, ctx: CommitContext): Promise<void> {
    const { name, op, spec } = cmd;
    await this.parts.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        if (op === 'define') {
          if (spec === undefined) throw badRequest(`ingest ${name}: a definition without its spec`);
          decideDefine(h, sink, name, spec);
        } else if (op === 'delete') decideDelete(h, sink, name);
        else decideRunning(h, sink, name, op === 'start');
      },
    });
    for (const l of this.ingestListeners) l(name);
  }

  private runSchema(s: SchemaOp, ctx: CommitContext): Promise<void> {
    const schema = this.parts.schema;
    switch (s.op) {
      case 'createIndex':
        return schema.createIndex(s.index, s.options, ctx);
      case 'deleteIndex':
        return schema.deleteIndex(s.index, ctx);
      case 'createField':
        return schema.createField(s.index, s.field, { options: s.options, extraIntFields: s.extraIntFields }, ctx);
      case 'deleteField':
        return schema.deleteField(s.index, s.field, ctx);
      case 'applySchema':
        return schema.applySchema(s.indexes, ctx);
    }
  }

  private runFrame(f: FrameOp, ctx: CommitContext): Promise<void> {
    const frames = this.frames;
    switch (f.op) {
      case 'createLegacyIndex':
        return frames.createLegacyIndex(f.index, f.options, f.legacy, ctx);
      case 'createFrame':
        return frames.createFrame(f.index, f.frame, f.input, ctx);
      case 'deleteFrame':
        return frames.deleteFrame(f.index, f.frame, ctx);
      case 'setIndexTimeQuantum':
        return frames.setIndexTimeQuantum(f.index, f.quantum, ctx);
      case 'setFrameTimeQuantum':
        return frames.setFrameTimeQuantum(f.index, f.frame, f.quantum, ctx, false);
      case 'createFrameField':
        return frames.createFrameField(f.index, f.frame, f.field, ctx);
      case 'deleteFrameField':
        return frames.deleteFrameField(f.index, f.frame, f.name, ctx);
      case 'defineInput':
        return this.inputs.define(f.index, f.name, f.body, ctx);
      case 'deleteInput':
        return this.inputs.delete(f.index, f.name, ctx);
    }
  }

  /** IDs of the keys, new ones assigned here: every node applies the same meta order, so the same IDs. */
  private runKeys(
    cmd: Extract<MetaCommand, { kind: 'keys' }>,
    ctx: CommitContext,
  ): Promise<{ columns: number[]; rows: number[][] }> {
    return this.parts.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        const idx = h.index(cmd.index);
        if (!idx) throw indexNotFoundNamed(cmd.index);
        if (cmd.columns.length > 0 && !idx.options.keys)
          throw badRequest(`index ${cmd.index} does not use string keys`);
        for (const r of cmd.rows) {
          const f = idx.field(r.field);
          if (!f) throw fieldNotFoundNamed(r.field);
          if (!f.options.keys) throw badRequest(`field ${r.field} does not use string keys`);
        }
        const columns = Array.from(assignKeys(idx.columnKeys, cmd.columns, sink, cmd.index, ''));
        const rows = cmd.rows.map((r) =>
          Array.from(assignKeys(idx.rowKeys.get(r.field), r.keys, sink, cmd.index, r.field)),
        );
        return { columns, rows };
      },
    });
  }

  private async runPql(index: string, text: string, o: PqlRun, ctx: CommitContext): Promise<unknown> {
    const parsed = parseQuery(text);
    // The coordinator's release, not this node's: every holder refuses or rewrites alike.
    if (o.release !== undefined && hasLegacyCall(parsed)) {
      if (!isLegacyRelease(o.release)) throw badRequest(`executing: unknown 0.x release ${o.release}`);
      checkLegacyRelease(o.release, parsed);
    }
    const engine = this.parts.engine;
    const query = engine.peekApplied((h) => rewriteLegacyQuery(h, index, parsed));
    // Calls naming an index or field deleted and re-created since it was sent (incarnations.ts).
    const at = o.metaOffset;
    const newer = at === undefined ? undefined : engine.peekApplied((h) => newerThan(h, index, at));
    const left = query.calls.map((c) => newer === 'index' || (newer !== undefined && namesAny({ calls: [c] }, newer)));
    const kept = query.calls.filter((_, i) => !left[i]);
    // Its writes take each field's options as of its metaOffset (state/field-as-of.ts).
    const opts = {
      shards: o.shards,
      columnAttrs: false,
      excludeColumns: false,
      excludeRowAttrs: false,
      metaOffset: o.metaOffset,
    };
    const limits = { maxWritesPerRequest: LIMITS.maxWritesPerRequest };
    const results = await engine.commit({
      ...ctx,
      decide: (h, sink) => {
        if (newer === 'index') return [];
        const res =
          kept.length === 0 ? [] : runQuery(h, sink, index, { calls: kept }, opts, limits, o.now, o.only).results;
        const idx = h.index(index);
        if (idx !== undefined) query.calls.forEach((c, i) => left[i] && markSetExistence(idx, c, o.only, sink));
        return res;
      },
    });
    let k = 0;
    return query.calls.map((_, i) => (left[i] ? { type: 'changed', changed: false } : results[k++]));
  }

  /**
   * The body of an import command decoded ahead, for the node that is about to send it and holds
   * its partition: decoded in one go right after the send is under way (setImmediate: kafkajs has
   * written the request by then), so it runs while Kafka takes the command, and the apply from the
   * node's own bytes (Feed.own) takes it. One synchronous decode: the sliced one
   * (decodeImportRequestAsync) cost ~1.5× its CPU here, reading the clock at every step.
   * A bits import's events are built then too (prepareBits, as a single node builds a large
   * import's before its commit): that was half of the apply after Kafka's acknowledgment (8.1 of
   * 16.5 ms, three nodes and the broker on this machine). Their commit checks that the index and
   * field are still the ones they were built for, and decides afresh otherwise; a refusal while
   * building them leaves them out, and the apply refuses as any holder does.
   * A large bits body goes to the import prepare thread instead (import-prepare-thread.ts), at
   * once: there the decode and the bucketing run beside kafkajs, not in its way, and the body
   * comes back as events only (the apply decodes the body itself in the rare case it cannot
   * commit them).
   * Undefined for other commands.
   */
  predecode(cmd: LogCommand): Promise<DecodedBody> | undefined {
    if (cmd.kind !== 'import' || (cmd.format !== 'bits' && cmd.format !== 'values')) return undefined;
    const { format, body } = cmd;
    const thread = this.parts.prepareThread;
    if (format === 'bits' && thread?.takes(body) === true) {
      const { index, field, shard, clear, metaOffset } = cmd;
      const where = { index, field, shard, clear, ...(metaOffset !== undefined ? { metaOffset } : {}) };
      return thread.prepare(this.parts.engine, where, body).then(
        (prepared): DecodedBody => (prepared === undefined ? { format } : { format, prepared }),
        // A refusal here (a missing field) is the apply's to give, as every holder gives it.
        (): DecodedBody => ({ format }),
      );
    }
    const out = new Promise<void>((resolve) => setImmediate(resolve)).then(async (): Promise<DecodedBody> => {
      if (format === 'values') return { format, request: decodeImportValueRequest(body) };
      const request = decodeImportRequest(body);
      const prepared = await prepareBits(this.parts.engine, this.bitsImport(cmd, request), AHEAD_SLICE_MS).catch(
        () => undefined,
      );
      return prepared === undefined ? { format, request } : { format, request, prepared };
    });
    // A body that does not decode is refused by the apply's own decode, with the same error.
    out.catch(() => undefined);
    return out;
  }

  private bitsImport(cmd: Extract<LogCommand, { kind: 'import' }>, request: ImportRequest): BitsImport {
    const { index, field, shard, clear, metaOffset } = cmd;
    return { ...request, index, field, shard, clear, metaOffset };
  }

  private async runImport(
    cmd: Extract<LogCommand, { kind: 'import' }>,
    ctx: CommitContext,
    decodedBody?: Promise<DecodedBody>,
  ): Promise<void> {
    const { index, field, shard, clear } = cmd;
    const { imports, engine } = this.parts;
    const newer = engine.peekApplied((h) => newerThan(h, index, cmd.metaOffset));
    // Written to an index or field deleted and re-created since (incarnations.ts): only existence.
    if (newer === 'index' || newer?.has(field) === true) return this.importLeftOut(cmd, newer === 'index', ctx);
    const ahead = await decodedBody?.catch(() => undefined);
    switch (cmd.format) {
      case 'bits': {
        if (ahead?.format !== 'bits')
          return imports.importBits(this.bitsImport(cmd, decodeImportRequest(cmd.body)), ctx);
        const { prepared } = ahead;
        // Events built while Kafka took the command: committed when still valid (as importBits does).
        if (prepared !== undefined && (await engine.commit({ ...ctx, prepared: (h) => prepared.commit(h) }))) return;
        return imports.importBits(this.bitsImport(cmd, ahead.request ?? decodeImportRequest(cmd.body)), ctx);
      }
      case 'values': {
        const v = ahead?.format === 'values' ? ahead.request : decodeImportValueRequest(cmd.body);
        return imports.importValues({ ...v, index, field, shard, clear }, ctx);
      }
      case 'roaring': {
        const views: { view: string; data: Uint8Array }[] = [];
        let at = 0;
        (cmd.views ?? []).forEach((view, i) => {
          const n = cmd.viewBytes?.[i] ?? 0;
          views.push({ view, data: cmd.body.subarray(at, at + n) });
          at += n;
        });
        return imports.importRoaring({ index, field, shard, clear, views, metaOffset: cmd.metaOffset }, ctx);
      }
    }
  }

  /** An import of a field re-created since: the existence of its columns, as incarnations.ts says. */
  private async importLeftOut(
    cmd: Extract<LogCommand, { kind: 'import' }>,
    indexGone: boolean,
    ctx: CommitContext,
  ): Promise<void> {
    const req = cmd.clear || indexGone || cmd.format === 'roaring' ? undefined : decodeImportColumns(cmd);
    await this.parts.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        const idx = h.index(cmd.index);
        if (req !== undefined && idx !== undefined) markImportExistence(idx, req, sink);
      },
    });
  }

  private setPosition(topic: ClusterTopic, partition: number, next: bigint): void {
    this.loaded.add(`${topic}/${partition}`);
    this.positions.advance(topic, partition, next);
  }
}
