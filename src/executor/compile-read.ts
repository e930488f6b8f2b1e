// Read calls → ReadPlan, validating everything up front with Pilosa's texts (§3.3, §3.5). Where
// Pilosa answers nonsense with zeros (§8.12: Sum/Min/Max without a usable field) or panics
// (§8.11: Options() without a child), we answer 400 instead.
import { badRequest } from '../domain/errors.js';
import { INVERSE_VIEW } from '../domain/names.js';
import { INVERSE_ARG } from '../pql/legacy.js';
import type { Call } from '../pql/ast.js';
import {
  WRITE_CALLS,
  type Fail,
  boolArg,
  fail,
  failWith,
  goType,
  goValue,
  smallUintArg,
  stringArg,
  timeArg,
  toSafe,
  uintValue,
} from './args.js';
import { type CompileEnv, compileBitmap, envField, hasCondition } from './compile-bitmap.js';
import type { BitmapPlan, OptionSettings, ReadPlan, RowsSpec, TopNPlan } from './plan.js';
import { colRef, rowRef } from './refs.js';
import { MAX_SHARD } from '../domain/shard.js';
import type { ReadonlyField } from '../state/readonly.js';

const MAP_REDUCE = failWith('map reduce: ');

export function compileRead(env: CompileEnv, call: Call): ReadPlan {
  // Only Count and bitmap calls (default:) get their key checks made while compiling (see
  // CompileEnv): every other call leaves them to checkKeys.
  switch (call.name) {
    case 'Count':
      if (call.args.size > 0) env.keysChecked = false;
      if (call.children.length === 0) fail('Count() requires an input bitmap');
      if (call.children.length > 1) fail('Count() only accepts a single bitmap input');
      return { kind: 'count', child: compileBitmap(env, call.children[0], fail, 'Count') };
    case 'Sum':
    case 'Min':
    case 'Max':
      env.keysChecked = false;
      return compileValCount(env, call);
    case 'MinRow':
    case 'MaxRow':
      env.keysChecked = false;
      return compileMinMaxRow(env, call);
    case 'TopN':
      env.keysChecked = false;
      return compileTopN(env, call);
    case 'Rows':
      env.keysChecked = false;
      return { kind: 'rows', spec: compileRows(env, call) };
    case 'GroupBy':
      env.keysChecked = false;
      return compileGroupBy(env, call);
    case 'Options': {
      env.keysChecked = false;
      const settings = compileOptions(call);
      return { kind: 'options', settings, child: compileRead(env, call.children[0]) };
    }
    default: {
      if (WRITE_CALLS.has(call.name)) throw badRequest(`executing: ${call.name}() is not allowed in a read-only query`);
      const plan = compileBitmap(env, call, MAP_REDUCE);
      // A plain Row() returns its row's attributes (Pilosa: only "Row", never conditions/Range).
      if (call.name === 'Row' && !hasCondition(call) && (plan.kind === 'row' || plan.kind === 'timeRow')) {
        return { kind: 'bitmap', plan, attrs: { field: plan.field, row: plan.row } };
      }
      return { kind: 'bitmap', plan };
    }
  }
}

/** Options(child, columnAttrs=B, excludeColumns=B, excludeRowAttrs=B, shards=[…]). */
export function compileOptions(call: Call): OptionSettings {
  if (call.children.length !== 1) fail('Options() requires exactly one child call');
  const s: OptionSettings = {};
  for (const k of ['columnAttrs', 'excludeRowAttrs', 'excludeColumns'] as const) {
    const v = boolArg(call, k, fail, `Query(): ${k} must be a bool`);
    if (v !== undefined) s[k] = v;
  }
  const shards = call.args.get('shards');
  if (shards !== undefined) {
    const bad = 'Query(): shards must be a list of unsigned integers';
    if (shards.kind !== 'list') fail(bad);
    s.shards = shards.items.map((i) => (i.kind === 'int' && i.value >= 0n ? optionShard(i.value) : fail(bad)));
  }
  return s;
}

/** A shard of Options(shards=…): within the server's ID range (domain/shard.ts), as a 400. */
function optionShard(v: bigint): number {
  const n = toSafe(v, 'shard', fail);
  if (n > MAX_SHARD) fail(`Query(): shard ${v} is out of range: shards go up to ${MAX_SHARD}`);
  return n;
}

function optionalFilter(env: CompileEnv, call: Call, f: Fail): BitmapPlan | undefined {
  if (call.children.length > 1) f(`${call.name}() only accepts a single bitmap input`);
  return call.children.length === 1 ? compileBitmap(env, call.children[0], f, call.name) : undefined;
}

function namedField(env: CompileEnv, call: Call): ReadonlyField {
  const name = stringArg(call, 'field');
  if (name === undefined) return fail(`${call.name}(): field required`);
  return envField(env, name) ?? fail(`field not found: ${name}`);
}

function compileValCount(env: CompileEnv, call: Call): ReadPlan {
  const field = namedField(env, call);
  if (field.options.type !== 'int') fail(`${call.name}(): field "${field.name}" is not an int field`);
  const op = call.name === 'Sum' ? 'sum' : call.name === 'Min' ? 'min' : 'max';
  return { kind: 'valCount', op, field, filter: optionalFilter(env, call, fail) };
}

function compileMinMaxRow(env: CompileEnv, call: Call): ReadPlan {
  const field = namedField(env, call);
  if (field.options.type === 'int') fail(`${call.name}() is not supported on int field types`);
  return {
    kind: 'minMaxRow',
    op: call.name === 'MinRow' ? 'min' : 'max',
    field,
    filter: optionalFilter(env, call, fail),
  };
}

function compileTopN(env: CompileEnv, call: Call): TopNPlan {
  const top = failWith('finding top results: ');
  const name = stringArg(call, '_field');
  if (name === undefined) return fail('TopN() field required');
  const field = envField(env, name);
  if (field === undefined) return fail(`field "${name}" not found`);
  const exec = (m: string): never => fail(`executeTopN: ${m}`);
  const shardErr = (m: string): never => top(`executeTopNShard: ${m}`);
  const idsArg = call.args.get('ids');
  let ids: number[] | undefined;
  if (idsArg !== undefined) {
    if (idsArg.kind !== 'list')
      exec(`could not convert ${goValue(idsArg)} of type ${goType(idsArg)} to []uint64 in Call.UintSliceArg`);
    else ids = [...new Set(idsArg.items.map((v) => toSafe(uintValue(v, 'ids', exec), 'ids', exec)))];
  }
  const n = smallUintArg(call, 'n', exec) ?? 0;
  if (field.options.type === 'int') top(`cannot compute TopN() on integer field: "${name}"`);
  const threshold = smallUintArg(call, 'threshold', shardErr) ?? 0;
  const tanimoto = smallUintArg(call, 'tanimotoThreshold', shardErr) ?? 0;
  if (call.children.length > 1) top('TopN() can only have one input bitmap');
  const src = call.children.length === 1 ? compileBitmap(env, call.children[0], top, 'TopN') : undefined;
  if (field.options.cacheType === 'none') top(`cannot compute TopN(), field has no cache: "${name}"`);
  if (tanimoto > 100) top('Tanimoto Threshold is from 1 to 100 only');
  const attrName = stringArg(call, 'attrName');
  const values = call.args.get('attrValues');
  return {
    kind: 'topN',
    field,
    n,
    src,
    ids,
    threshold: threshold === 0 ? 1 : threshold,
    tanimoto,
    attrName,
    attrValues: values?.kind === 'list' ? values.items : undefined,
    ...(call.args.has(INVERSE_ARG) ? { view: INVERSE_VIEW } : {}),
  };
}

export function compileRows(env: CompileEnv, call: Call): RowsSpec {
  const name = stringArg(call, '_field') ?? stringArg(call, 'field');
  if (name === undefined) return fail('Rows() field required');
  const field = envField(env, name) ?? fail(`field not found: ${name}`);
  const spec: RowsSpec = { field };
  const prev = call.args.get('previous');
  if (prev !== undefined) spec.previous = rowRef(field, prev, 'previous', (m) => fail(`getting previous: ${m}`));
  const limit = smallUintArg(call, 'limit', fail);
  if (limit !== undefined) spec.limit = limit;
  const col = call.args.get('column');
  if (col !== undefined) spec.column = colRef(env.index, col, 'column', (m) => fail(`getting column: ${m}`));
  if (field.options.type === 'time') {
    const from = timeArg(call, 'from', fail);
    const to = timeArg(call, 'to', fail);
    if (from !== undefined || to !== undefined || field.options.noStandardView) spec.time = { from, to };
  }
  return spec;
}

function compileGroupBy(env: CompileEnv, call: Call): ReadPlan {
  if (call.children.length === 0) fail('need at least one child call');
  for (const c of call.children) {
    if (c.name !== 'Rows') fail(`'${c.name}' is not a valid child query for GroupBy, must be 'Rows'`);
  }
  // Children read the standard view only (as in Pilosa): a time range on them is ignored.
  const children = call.children.map((c) => ({ ...compileRows(env, c), time: undefined }));
  // GroupBy(previous=[…]) pages like `previous` on each child (key-checked in key-check.ts).
  const prev = call.args.get('previous');
  if (prev?.kind === 'list') {
    children.forEach((spec, i) => {
      spec.previous ??= rowRef(spec.field, prev.items[i], 'previous', (m) => fail(`getting previous: ${m}`));
    });
  }
  const filterArg = call.args.get('filter');
  let filter: BitmapPlan | undefined;
  if (filterArg !== undefined) {
    if (filterArg.kind !== 'call')
      fail(`could not convert ${goValue(filterArg)} of type ${goType(filterArg)} to Call in Call.CallArg`);
    else filter = compileBitmap(env, filterArg.call, fail, 'GroupBy');
  }
  return {
    kind: 'groupBy',
    children,
    limit: smallUintArg(call, 'limit', fail),
    offset: smallUintArg(call, 'offset', fail),
    filter,
  };
}
