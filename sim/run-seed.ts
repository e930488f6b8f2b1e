// One seeded run: clients send writes and reads to the real engine over the in-memory disk
// while the controller takes snapshots, crashes and restarts the node, and the disk injects
// faults. Everything runs on the virtual clock, so the seed alone decides the run and its trace.
import { DomainError } from '../src/domain/errors.js';
import { SHARD_WIDTH } from '../src/domain/shard.js';
import { parseFieldBody } from '../src/service/schema-service.js';
import { stateDigest } from '../src/state/digest.js';
import type { MemoryDisk } from '../src/storage/memory/memory-disk.js';
import { AssertionError } from '../src/util/assert.js';
import { Clients } from './clients.js';
import { type Cell, ClientModel, Violation } from './model.js';
import { SimNode } from './node.js';
import { Rng } from './rng.js';
import { newDisk, pickCrash, damageOne } from './storage-faults.js';
import { VirtualClock } from './virtual-clock.js';

export const INDEX = 'i';
export const FIELD = 'f';
/** Scope of the simulator's own timers (clients, controller); nodes use 1, 2, … */
const SIM_SCOPE = 0;

export interface SeedOptions {
  readonly seed: number;
  /** --break acked-loss: the disk loses an acknowledged append at every crash. */
  readonly breakAckedLoss?: boolean;
  /** Virtual ms of client traffic (default 2000). */
  readonly durationMs?: number;
}

export interface SeedResult {
  readonly seed: number;
  readonly failure: string | undefined;
  readonly trace: readonly string[];
  readonly summary: string;
}

export class Sim {
  readonly rng: Rng;
  readonly vclock = new VirtualClock();
  readonly clock = this.vclock.scoped(SIM_SCOPE);
  readonly disk: MemoryDisk;
  readonly models: ClientModel[] = [];
  readonly trace: string[] = [];
  node: SimNode | undefined;
  failure: string | undefined;
  /** Orders acknowledgements and reads (ackedAt, read starts). */
  events = 0;
  reqIds = 0;
  private incarnations = 0;
  private transition: Promise<void> = Promise.resolve();
  private upWaiters: (() => void)[] = [];
  readonly counts = { acked: 0, unknown: 0, refused: 0, reads: 0, crashes: 0, restarts: 0, snapshots: 0, damage: 0 };

  constructor(readonly opts: SeedOptions) {
    this.rng = new Rng(opts.seed);
    this.disk = newDisk(this.rng.fork(), this.vclock.scoped(SIM_SCOPE), opts.breakAckedLoss === true);
  }

  note(line: string): void {
    this.trace.push(`${String(this.vclock.elapsed).padStart(6)} ${line}`);
  }

  fail(err: unknown): void {
    const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    if (this.failure === undefined) {
      this.failure = text;
      this.note(`FAILURE ${text}`);
    }
  }

  get durationMs(): number {
    return this.opts.durationMs ?? 2000;
  }

  /** Resolves with the live node (waiting through restarts). */
  async nodeUp(): Promise<SimNode> {
    while (this.node === undefined) await new Promise<void>((resolve) => this.upWaiters.push(resolve));
    return this.node;
  }

  /** Waits until `node` is no longer the live one. */
  async nodeChanged(node: SimNode): Promise<void> {
    await node.gone;
  }

  async run(): Promise<void> {
    const settings = {
      snapshotEveryEvents: this.rng.between(20, 400),
      maxBatchRecords: this.rng.pick([4, 64, 1000]),
    };
    this.note(`settings ${JSON.stringify(settings)}`);
    const node = await this.openNode(settings);
    if (node === undefined) throw new Violation('the first node did not open');
    this.up(node);
    await node.schema.createIndex(INDEX, { keys: false, trackExistence: true });
    await node.schema.createField(INDEX, FIELD, parseFieldBody(undefined));
    const nClients = this.rng.between(2, 5);
    for (let c = 0; c < nClients; c++) this.models.push(new ClientModel(c));
    const clients = new Clients(this);
    await Promise.all([...this.models.map((m) => clients.run(m.client, this.rng.fork())), this.controller(settings)]);
    // The end: a clean stop, the replayed state against the live one, every write checked.
    await this.restart('end', 'clean', settings);
  }

  private async controller(settings: { snapshotEveryEvents: number; maxBatchRecords: number }): Promise<void> {
    const rng = this.rng.fork();
    while (this.vclock.elapsed < this.durationMs && this.failure === undefined) {
      await this.clock.sleep(rng.between(20, 400));
      const node = this.node;
      if (node === undefined) continue;
      const r = rng.next();
      if (r < 0.35) await this.restart('crash', 'crash', settings);
      else if (r < 0.5) await this.restart('restart', 'clean', settings);
      else if (r < 0.8) {
        const out = await node.race(node.engine.snapshots.take());
        this.counts.snapshots++;
        this.note(
          `snapshot ${out === 'gone' ? 'cut by a crash' : 'ok' in out ? `at ${out.ok}` : `failed (${String(out.err)})`}`,
        );
      }
    }
  }

  /** A storage error made the engine fail: it is restarted, as an operator would. */
  onFatal(node: SimNode, err: Error): void {
    this.note(`node ${node.incarnation} failed: ${err.message.slice(0, 80)}`);
    if (err instanceof AssertionError) this.fail(err);
    void this.restart('after a storage error', 'crash', undefined, node);
  }

  private lastSettings = { snapshotEveryEvents: 100, maxBatchRecords: 64 };

  /**
   * Stops the node (clean: a graceful stop, whose live digest the replay must match; crash: the
   * disk keeps what the seed says), opens a new one and checks every client's writes on it.
   */
  restart(why: string, kind: 'clean' | 'crash', settings = this.lastSettings, only?: SimNode): Promise<void> {
    this.lastSettings = settings;
    const step = this.transition.then(async () => {
      const old = this.node;
      if (old === undefined || (only !== undefined && old !== only)) return;
      this.node = undefined;
      let liveDigest: string | undefined;
      if (kind === 'clean' && old.fatal === undefined) {
        const out = await old.race(old.engine.stop());
        if (out !== 'gone' && 'ok' in out) liveDigest = old.engine.peekApplied(stateDigest);
      }
      const choice = pickCrash(this.rng, this.disk, kind === 'clean');
      this.disk.crash(choice);
      this.vclock.kill(old.incarnation);
      old.kill();
      this.counts.crashes += kind === 'crash' ? 1 : 0;
      this.counts.restarts++;
      this.note(
        `${why}: ${kind} of node ${old.incarnation} (kept ${choice.keepUnsynced} unsynced${choice.tear !== undefined ? ', tore the next' : ''})`,
      );
      const node = await this.openNode(settings, kind === 'crash');
      if (node === undefined) throw new Violation(`node ${old.incarnation + 1} did not open`);
      await this.verify(node, `${why} (node ${node.incarnation})`);
      if (liveDigest !== undefined) {
        const replayed = node.engine.peekApplied(stateDigest);
        if (replayed !== liveDigest)
          throw new Violation(
            `${why}: the replayed state digest ${replayed.slice(0, 12)} is not the live one ${liveDigest.slice(0, 12)}`,
          );
        this.note(`digest ${replayed.slice(0, 16)} live = replayed`);
      }
      this.up(node);
    });
    this.transition = step.catch((err: unknown) => this.fail(err));
    return this.transition;
  }

  private up(node: SimNode): void {
    this.node = node;
    for (const w of this.upWaiters.splice(0)) w();
  }

  /**
   * Opens the next incarnation. Damage injected before it must be survived or refused: a
   * refusal is repaired (the damage undone, as from a backup) and the open retried.
   */
  private async openNode(
    settings: { snapshotEveryEvents: number; maxBatchRecords: number },
    mayDamage = false,
  ): Promise<SimNode | undefined> {
    const damage = mayDamage && this.rng.chance(0.15) ? damageOne(this.rng, this.disk) : undefined;
    if (damage !== undefined) {
      this.counts.damage++;
      this.note(`damaged ${damage.what}`);
    }
    for (let attempt = 1; ; attempt++) {
      const incarnation = ++this.incarnations;
      const clock = this.vclock.scoped(incarnation);
      try {
        const node = await SimNode.open(this.disk, clock, incarnation, settings, (n, err) => this.onFatal(n, err));
        damage?.undo();
        return node;
      } catch (err) {
        this.vclock.kill(incarnation);
        const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        const injected = /ENOSPC|EIO/.test(text);
        const refused = damage !== undefined && /Corrupt|StartupError|missing|ahead of the log/.test(text);
        if (!(injected || refused) || attempt > 20) throw new Violation(`open of node ${incarnation} failed: ${text}`);
        this.note(`open of node ${incarnation} refused: ${text.slice(0, 100)}`);
        if (refused) damage?.undo();
        this.disk.crash(pickCrash(this.rng, this.disk, false));
      }
    }
  }

  /** Reads every client's cells on `node` and checks them against its requests. */
  async verify(node: SimNode, what: string): Promise<void> {
    for (const m of this.models) {
      const seen = await this.readCells(node, m.client, true);
      const k = m.matchPrefix(seen, m.mustHold(Number.POSITIVE_INFINITY), what);
      const lost = m.reqs.length - k;
      m.recovered(k, what, ++this.events);
      if (lost > 0) this.note(`client ${m.client}: ${lost} request(s) not acknowledged are lost`);
    }
    this.note(
      `checked ${what}: ${this.models.map((m) => m.reqs.length).join('/')} requests hold, log ${node.log.firstSeq}..${node.log.lastSeq}`,
    );
  }

  /** The client's row in field f (and, with `fields`, which of its fields exist), as cells. */
  async readCells(node: SimNode, client: number, fields: boolean): Promise<Map<Cell, number>> {
    const { response } = await node.queries.execute(INDEX, `Row(${FIELD}=${client})`, {
      columnAttrs: false,
      excludeColumns: false,
      excludeRowAttrs: true,
    });
    const seen = new Map<Cell, number>();
    const row = response.results[0];
    if (row?.type !== 'row') throw new Violation(`Row() answered ${row?.type}`);
    for (const col of row.columns) seen.set(`b${col}`, 1);
    if (fields) {
      const names = await node.engine.read((h) => [...(h.index(INDEX)?.fields.keys() ?? [])]);
      for (const n of names) if (n.startsWith(`c${client}x`)) seen.set(`F${n}`, 1);
    }
    return seen;
  }

  /** Classifies a request's failure: refused (nothing applied) or unknown. */
  static refused(err: unknown): boolean {
    return err instanceof DomainError;
  }
}

export { SHARD_WIDTH };

/** Runs of the event loop's check phase between two timer firings: the work of one instant. */
const TURNS_PER_INSTANT = 3;
/** Turns to wait, with no timer set, before calling a run stuck (chains of setImmediate end). */
const STUCK_TURNS = 2000;
const turn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs one seed to its end: the run's tasks wait on virtual time only, so the driver lets the
 * work of each instant finish (a few event-loop turns, nothing real runs meanwhile), then moves
 * the clock to the next timer.
 */
export async function runSeed(opts: SeedOptions): Promise<SeedResult> {
  const sim = new Sim(opts);
  let finished = false;
  const main = sim.run().then(
    () => undefined,
    (err: unknown) => sim.fail(err),
  );
  void main.finally(() => {
    finished = true;
  });
  const limit = sim.durationMs * 20;
  while (!finished) {
    for (let i = 0; i < TURNS_PER_INSTANT && !finished; i++) await turn();
    if (finished) break;
    if (sim.vclock.fireNext()) {
      if (sim.vclock.elapsed > limit) {
        sim.fail(new Violation(`still running at virtual ${sim.vclock.elapsed} ms`));
        break;
      }
      continue;
    }
    let waited = 0;
    while (!finished && sim.vclock.pending === 0 && waited < STUCK_TURNS) {
      await turn();
      waited++;
    }
    if (!finished && sim.vclock.pending === 0) {
      sim.fail(new Violation('stuck: requests wait and nothing is scheduled'));
      break;
    }
  }
  const c = sim.counts;
  const summary = `acked ${c.acked}, unknown ${c.unknown}, refused ${c.refused}, reads ${c.reads}, crashes ${c.crashes}, restarts ${c.restarts}, snapshots ${c.snapshots}, damaged ${c.damage}, disk ${JSON.stringify(sim.disk.stats)}, virtual ${sim.vclock.elapsed} ms`;
  sim.note(`end: ${summary}`);
  return { seed: opts.seed, failure: sim.failure, trace: sim.trace, summary };
}
