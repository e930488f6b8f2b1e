// Legacy input ingest (POST /index/{i}/input/{name}, docs/API.md §6.5): JSON records → bits per
// frame through the definition's actions. Pure: the service imports the result in one write.
import { badRequest } from '../../domain/errors.js';
import { parseTimestamp } from '../../domain/time-quantum.js';
import type { Destination, InputAction, InputDefinition } from './input-definition.js';

/** Bits for one frame, column-major; timestamps in Unix nanoseconds, 0 = none. */
export interface FrameBits {
  rows: number[];
  columns: number[];
  timestamps: bigint[];
}

export function ingestRecords(def: InputDefinition, body: unknown): Map<string, FrameBits> {
  if (!Array.isArray(body)) throw badRequest('input must be a JSON array of objects');
  const fields = new Map(def.fields.map((f) => [f.name, f]));
  const pk = def.fields.find((f) => f.primaryKey === true)!.name;
  const out = new Map<string, FrameBits>();
  body.forEach((raw: unknown, i) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw badRequest(`input record ${i} must be a JSON object`);
    const record = raw as Record<string, unknown>;
    const col = columnOf(record[pk], pk);
    const bits: [string, number][] = [];
    const times = new Map<string, bigint>();
    for (const [key, value] of Object.entries(record)) {
      const field = fields.get(key);
      if (field === undefined) throw badRequest(`field not found: ${key}`);
      if (value === null || key === pk) continue;
      for (const action of field.actions ?? []) {
        const r = handleAction(action, value);
        if (r === undefined) continue;
        if (typeof r === 'bigint') times.set(action.frame, r);
        else bits.push([action.frame, r]);
      }
    }
    for (const [frame, row] of bits) {
      let fb = out.get(frame);
      if (fb === undefined) out.set(frame, (fb = { rows: [], columns: [], timestamps: [] }));
      fb.rows.push(row);
      fb.columns.push(col);
      fb.timestamps.push(times.get(frame) ?? 0n);
    }
  });
  return out;
}

function columnOf(v: unknown, pk: string): number {
  if (v === undefined || v === null) throw badRequest(`primary key does not exist: ${pk}`);
  if (typeof v !== 'number') throw badRequest(`primary key ${pk} must be a number`);
  // Go converts the JSON float64 with uint64(v): the fraction is dropped.
  const col = Math.trunc(v);
  if (!Number.isSafeInteger(col) || col < 0)
    throw badRequest(`primary key ${pk} must be an unsigned integer below 2^53`);
  return col;
}

/** A row ID to set, a timestamp (ns, bigint) for the action's frame, or nothing. */
function handleAction(action: InputAction, value: unknown): number | bigint | undefined {
  const fail = (msg: string): never => {
    throw badRequest(`error handling action: ${action.valueDestination}, err: ${msg}`);
  };
  const dest: Destination = action.valueDestination;
  switch (dest) {
    case 'mapping': {
      if (typeof value !== 'string') return fail(`value ${JSON.stringify(value)} must be a string`);
      const row = Object.hasOwn(action.valueMap ?? {}, value) ? action.valueMap![value] : undefined;
      return row ?? fail(`Value ${value} does not exist in definition map`);
    }
    case 'value-to-row': {
      if (typeof value !== 'number') return fail(`value ${JSON.stringify(value)} must be a number`);
      const row = Math.trunc(value);
      return Number.isSafeInteger(row) && row >= 0 ? row : fail(`value ${value} is not an unsigned integer`);
    }
    case 'single-row-boolean':
      if (typeof value !== 'boolean') return fail(`value ${JSON.stringify(value)} must be a boolean`);
      return value ? action.rowID : undefined;
    case 'set-timestamp': {
      if (typeof value !== 'string') return fail(`value ${JSON.stringify(value)} must be a timestamp string`);
      const ms = parseTimestamp(value);
      return ms === undefined ? fail(`invalid timestamp ${value} (want YYYY-MM-DDTHH:MM)`) : BigInt(ms) * 1_000_000n;
    }
  }
}
