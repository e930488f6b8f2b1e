// The shard restriction of the PQL write path (a cluster holder runs each log command for its
// partition's shards only): calls that touch every shard — ClearRow, Store, also under Options —
// change only the allowed shards, and a one-column write outside them changes nothing. Without
// the restriction the same requests change every shard (checked first, so the test can fail).
import { afterEach, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { executeQuery } from '../../src/executor/index.js';
import { parse } from '../../src/pql/index.js';
import { runQuery } from '../../src/service/query/index.js';
import { SchemaService } from '../../src/service/schema-service.js';
import { parseFieldBody } from '../../src/service/schema-service.js';
import { removeDir } from '../helpers/temp.js';
import { type TestEngine, openEngine } from './cluster-write-support.js';

const S = 1 << 20;
const opts = { columnAttrs: false, excludeColumns: false, excludeRowAttrs: false };
const even = (shard: number): boolean => shard % 2 === 0;
let node: (TestEngine & { dir: string }) | undefined;

afterEach(async () => {
  await node?.close();
  if (node !== undefined) removeDir(node.dir);
  node = undefined;
});

async function setUp(): Promise<Engine> {
  node = await openEngine(undefined, false);
  const { engine } = node;
  const schema = new SchemaService(engine);
  await schema.createIndex('i', { keys: false, trackExistence: true });
  for (const f of ['f', 'g']) await schema.createField('i', f, parseFieldBody(undefined));
  const sets = [0, 1, 2, 3].flatMap((s) => [
    `Set(${s * S + 1}, f=1)`,
    `Set(${s * S + 2}, f=2)`,
    `Set(${s * S + 3}, g=1)`,
  ]);
  await write(engine, sets.join(' '));
  return engine;
}

function write(engine: Engine, pql: string, only?: (shard: number) => boolean): Promise<unknown> {
  return engine.commit({
    decide: (h, sink) => runQuery(h, sink, 'i', parse(pql), opts, { maxWritesPerRequest: 0 }, undefined, only).results,
  });
}

function rows(engine: Engine, pql: string): unknown {
  return engine.peekApplied((h) =>
    executeQuery(h, 'i', parse(pql), opts).results.map((r) => (r.type === 'row' ? r.columns : r)),
  );
}

describe('PQL writes restricted to some shards', () => {
  it('without a restriction, ClearRow and Store change every shard', async () => {
    const engine = await setUp();
    await write(engine, 'ClearRow(f=1) Store(Row(f=2), g=1)');
    expect(rows(engine, 'Row(f=1) Row(g=1)')).toEqual([[], [2, S + 2, 2 * S + 2, 3 * S + 2]]);
  });

  it('ClearRow and Store change only the allowed shards', async () => {
    const engine = await setUp();
    expect(await write(engine, 'ClearRow(f=1) Store(Row(f=2), g=1)', even)).toEqual([
      { type: 'changed', changed: true },
      { type: 'changed', changed: true },
    ]);
    expect(rows(engine, 'Row(f=1) Row(g=1)')).toEqual([
      [S + 1, 3 * S + 1],
      [2, S + 3, 2 * S + 2, 3 * S + 3],
    ]);
  });

  it('under Options(shards=…) only the named shards that are allowed', async () => {
    const engine = await setUp();
    await write(engine, 'Options(ClearRow(f=1), shards=[1, 2])', even);
    expect(rows(engine, 'Row(f=1)')).toEqual([[1, S + 1, 3 * S + 1]]);
  });

  it('a one-column write outside the allowed shards changes nothing', async () => {
    const engine = await setUp();
    expect(await write(engine, `Set(${S + 9}, f=1) Clear(${S + 1}, f=1) Set(9, f=1)`, even)).toEqual([
      { type: 'changed', changed: false },
      { type: 'changed', changed: false },
      { type: 'changed', changed: true },
    ]);
    expect(rows(engine, 'Row(f=1)')).toEqual([[1, 9, S + 1, 2 * S + 1, 3 * S + 1]]);
  });
});
