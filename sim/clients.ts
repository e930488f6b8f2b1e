// The simulator's clients: each sends one request at a time through the services the HTTP routes
// call — PQL sets and clears (several calls in one request), small imports (decided in one
// step) and large ones (prepared off to the side, across shards), schema changes, and
// multi-call reads whose every row is checked against the writes sent so far.
import { DomainError } from '../src/domain/errors.js';
import { parseFieldBody } from '../src/service/schema-service.js';
import type { BitsImport } from '../src/service/import/import-types.js';
import { AssertionError } from '../src/util/assert.js';
import { type Cell, type ClientModel, type Req, Violation } from './model.js';
import type { SimNode } from './node.js';
import type { Rng } from './rng.js';
import { FIELD, INDEX, SHARD_WIDTH, type Sim } from './run-seed.js';

type Write = { label: string; cells: Map<Cell, number>; send: (node: SimNode) => Promise<unknown> };

/** Shards the columns spread over (a large import spans several). */
const SHARDS = 4;

export class Clients {
  /** Columns handed out so far: each is written by one client only. */
  private used = new Set<number>();

  constructor(private readonly sim: Sim) {}

  async run(client: number, rng: Rng): Promise<void> {
    const sim = this.sim;
    const model = sim.models[client];
    while (sim.vclock.elapsed < sim.durationMs && sim.failure === undefined) {
      await sim.clock.sleep(rng.between(1, 30));
      const node = await sim.nodeUp();
      try {
        const r = rng.next();
        if (r < 0.25) await this.read(node, model, rng);
        else await this.write(node, model, this.pickWrite(model, rng));
      } catch (err) {
        sim.fail(err);
      }
    }
  }

  private pickWrite(model: ClientModel, rng: Rng): Write {
    const c = model.client;
    const state = model.expected();
    const setCols = [...model.setColumns()];
    const r = rng.next();
    if (r < 0.3 || setCols.length === 0) {
      const cols = this.fresh(rng, rng.between(1, 3));
      return {
        label: `Set×${cols.length}`,
        cells: cellsOf(cols, 1),
        send: (n) => n.queries.execute(INDEX, cols.map((col) => `Set(${col}, ${FIELD}=${c})`).join(' '), OPTS),
      };
    }
    if (r < 0.45) {
      const cols = pickSome(rng, setCols, rng.between(1, 2));
      return {
        label: `Clear×${cols.length}`,
        cells: cellsOf(cols, 0),
        send: (n) => n.queries.execute(INDEX, cols.map((col) => `Clear(${col}, ${FIELD}=${c})`).join(' '), OPTS),
      };
    }
    if (r < 0.65 || r >= 0.9) {
      const large = r >= 0.9;
      const cols = large ? this.fresh(rng, rng.between(300, 2000), true) : this.fresh(rng, rng.between(1, 20));
      return {
        label: `import ${large ? 'large' : 'small'} ${cols.length}`,
        cells: cellsOf(cols, 1),
        send: bitsImport(c, cols, false),
      };
    }
    if (r < 0.75) {
      const cols = pickSome(rng, setCols, rng.between(1, 10));
      return { label: `import clear ${cols.length}`, cells: cellsOf(cols, 0), send: bitsImport(c, cols, true) };
    }
    const name = `c${c}x${rng.int(3)}`;
    const exists = state.get(`F${name}`) === 1;
    return {
      label: `${exists ? 'delete' : 'create'} field ${name}`,
      cells: new Map([[`F${name}`, exists ? 0 : 1]]),
      send: (n) =>
        exists ? n.schema.deleteField(INDEX, name) : n.schema.createField(INDEX, name, parseFieldBody(undefined)),
    };
  }

  /** Sends one write; its outcome updates the model (acknowledged, refused or unknown). */
  private async write(node: SimNode, model: ClientModel, w: Write): Promise<void> {
    const sim = this.sim;
    const req: Req = {
      id: ++sim.reqIds,
      client: model.client,
      label: w.label,
      cells: w.cells,
      state: 'pending',
      durable: false,
      ackedAt: Infinity,
    };
    model.add(req);
    const out = await node.race(w.send(node));
    if (out !== 'gone' && 'ok' in out) {
      req.state = 'acked';
      req.durable = true;
      req.ackedAt = ++sim.events;
      sim.counts.acked++;
      sim.note(`c${model.client} #${req.id} ${w.label} acked`);
      return;
    }
    const err = out === 'gone' ? undefined : out.err;
    if (err instanceof AssertionError) throw err;
    if (err instanceof DomainError) {
      // Refused: nothing was applied (a later check fails if anything was).
      model.drop(req);
      sim.counts.refused++;
      sim.note(`c${model.client} #${req.id} ${w.label} refused (${err.code})`);
    } else {
      req.state = 'unknown';
      sim.counts.unknown++;
      sim.note(
        `c${model.client} #${req.id} ${w.label} unknown (${out === 'gone' ? 'crash' : String(err).slice(0, 60)})`,
      );
    }
    // A refusal or an unknown outcome comes from a node that is failing or gone: wait for the next.
    if (node.fatal !== undefined || !node.alive || (err instanceof DomainError && err.code === 'unavailable'))
      await sim.nodeChanged(node);
  }

  /**
   * A multi-call read: this client's row, its count, and another client's row. Each row must be
   * a prefix of its client's requests holding all acknowledged before the read began; what it
   * shows must survive from now on.
   */
  private async read(node: SimNode, model: ClientModel, rng: Rng): Promise<void> {
    const sim = this.sim;
    const other = sim.models[rng.int(sim.models.length)];
    const since = ++sim.events;
    const q = `Row(${FIELD}=${model.client}) Count(Row(${FIELD}=${model.client})) Row(${FIELD}=${other.client})`;
    const out = await node.race(node.queries.execute(INDEX, q, OPTS));
    if (out === 'gone' || 'err' in out) {
      const err = out === 'gone' ? undefined : out.err;
      if (err instanceof AssertionError) throw err;
      sim.note(`c${model.client} read failed (${out === 'gone' ? 'crash' : String(err).slice(0, 60)})`);
      if (node.fatal !== undefined || !node.alive || err instanceof DomainError) await sim.nodeChanged(node);
      return;
    }
    const [mine, count, theirs] = out.ok.response.results;
    if (mine?.type !== 'row' || count?.type !== 'count' || theirs?.type !== 'row')
      throw new Violation(`read answered ${out.ok.response.results.map((r) => r.type).join(',')}`);
    if (count.n !== mine.columns.length)
      throw new Violation(`read: Count ${count.n} differs from the ${mine.columns.length} columns of the same row`);
    const at = ++sim.events;
    const shown: string[] = [];
    for (const [m, row] of [
      [model, mine.columns],
      [other, theirs.columns],
    ] as const) {
      const seen = new Map<Cell, number>([...row].map((col) => [`b${col}`, 1]));
      const k = m.matchPrefix(seen, m.mustHold(since), `read by client ${model.client}`, true);
      m.observed(k, at);
      shown.push(`${m.client}:${row.length}`);
    }
    sim.counts.reads++;
    sim.note(`c${model.client} read ${shown.join(' ')}`);
  }

  /** `n` columns no client wrote yet; `spread`: across shards (a large import). */
  private fresh(rng: Rng, n: number, spread = false): number[] {
    const out: number[] = [];
    while (out.length < n) {
      const shard = spread || rng.chance(0.2) ? rng.int(SHARDS) : 0;
      const col = shard * SHARD_WIDTH + rng.int(spread ? SHARD_WIDTH : 50_000);
      if (this.used.has(col)) continue;
      this.used.add(col);
      out.push(col);
    }
    return out;
  }
}

const OPTS = { columnAttrs: false, excludeColumns: false, excludeRowAttrs: true };

function cellsOf(cols: readonly number[], value: number): Map<Cell, number> {
  return new Map(cols.map((col) => [`b${col}`, value]));
}

function pickSome(rng: Rng, from: readonly number[], n: number): number[] {
  const pool = [...from];
  const out: number[] = [];
  while (out.length < n && pool.length > 0) out.push(pool.splice(rng.int(pool.length), 1)[0]);
  return out;
}

function bitsImport(client: number, cols: readonly number[], clear: boolean): (node: SimNode) => Promise<void> {
  const req: BitsImport = {
    index: INDEX,
    field: FIELD,
    rowIds: new Uint32Array(cols.length).fill(client),
    columnIds: Float64Array.from(cols),
    timestamps: null,
    rowKeys: [],
    columnKeys: [],
    clear,
  };
  return (node) => node.imports.importBits(req);
}
