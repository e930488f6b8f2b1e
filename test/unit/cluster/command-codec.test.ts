// The cluster command format: every kind survives encode → decode (64-bit integers exact, import
// bodies byte for byte), a newer version is refused, and a large command is cut into chunks that
// the assembler puts back together — dropping a run it cannot complete instead of mixing commands.
import { describe, expect, it } from 'vitest';
import type { Command } from '../../../src/cluster/commands/command.js';
import {
  type AssembledCommand,
  COMMAND_VERSION,
  CommandAssembler,
  CommandFormatError,
  commandMessages,
  decodeCommand,
  encodeCommand,
} from '../../../src/cluster/commands/command-codec.js';
import { defaultFieldOptions } from '../../../src/domain/types.js';

const intField = { ...defaultFieldOptions('int'), min: -(1n << 63n), max: (1n << 63n) - 1n };

const commands: Command[] = [
  { kind: 'schema', schema: { op: 'createIndex', index: 'i', options: { keys: true, trackExistence: true } } },
  {
    kind: 'schema',
    schema: {
      op: 'createField',
      index: 'i',
      field: 'v',
      options: intField,
      extraIntFields: [{ name: 'w', options: intField }],
    },
  },
  { kind: 'schema', schema: { op: 'deleteField', index: 'i', field: 'v' } },
  { kind: 'keys', index: 'i', columns: ['a', 'é'], rows: [{ field: 'f', keys: ['x'] }] },
  { kind: 'attrs', index: 'i', pql: 'SetRowAttrs(f, 1, color="red")' },
  { kind: 'pql', index: 'i', pql: 'Set(1, f=1)\nClearRow(f=2)', shards: [0, 3], partition: 7, metaOffset: '12' },
  {
    kind: 'import',
    index: 'i',
    field: 'f',
    shard: 2,
    format: 'roaring',
    clear: true,
    views: ['standard', 'standard_2020'],
    viewBytes: [2, 1],
    body: Uint8Array.of(1, 2, 3),
    partition: 1,
    metaOffset: '0',
  },
];

describe('cluster command codec', () => {
  it('decodes what it encodes, for every kind', () => {
    for (const c of commands) {
      const back = decodeCommand(encodeCommand(c), 'test');
      if (c.kind === 'import' && back.kind === 'import') {
        expect(Buffer.from(back.body)).toEqual(Buffer.from(c.body));
        expect({ ...back, body: undefined }).toEqual({ ...c, body: undefined });
      } else expect(back).toEqual(c);
    }
  });

  it('keeps 64-bit integers exact', () => {
    const back = decodeCommand(encodeCommand(commands[1]), 'test');
    expect(back.kind === 'schema' && back.schema.op === 'createField' && back.schema.options.min).toBe(-(1n << 63n));
  });

  it('refuses a version it does not know, and a truncated header', () => {
    const b = encodeCommand(commands[0]);
    b[0] = COMMAND_VERSION + 1;
    expect(() => decodeCommand(b, 'x')).toThrow(CommandFormatError);
    expect(() => decodeCommand(encodeCommand(commands[0]).subarray(0, 8), 'x')).toThrow(/runs past/);
  });

  it('cuts a large command into chunks and reassembles it', () => {
    const body = new Uint8Array(10_000).map((_, i) => i & 0xff);
    const big: Command = {
      ...(commands[6] as Extract<Command, { kind: 'import' }>),
      body,
      viewBytes: [10_000],
      views: ['standard'],
    };
    const msgs = commandMessages(big, 1000);
    expect(msgs.length).toBe(Math.ceil(encodeCommand(big).length / 1000));
    const asm = new CommandAssembler();
    let done: AssembledCommand | undefined;
    msgs.forEach((m, i) => {
      done = asm.push({ offset: String(10 + i), headers: m.headers, value: m.value as Buffer });
      if (i < msgs.length - 1) {
        expect(done).toBeUndefined();
        expect(asm.pendingFrom).toBe('10');
      }
    });
    expect(done).toMatchObject({ firstOffset: '10', lastOffset: String(9 + msgs.length) });
    const back = decodeCommand(done?.value ?? Buffer.alloc(0), 't');
    expect(back.kind === 'import' && Buffer.from(back.body).equals(Buffer.from(body))).toBe(true);
  });

  it('assembles interleaved chunk runs each by its id (concurrent transactions)', () => {
    const a = commandMessages({ kind: 'attrs', index: 'i', pql: 'x'.repeat(3000) }, 1000);
    const b = commandMessages(commands[0], 1000);
    const asm = new CommandAssembler();
    const push = (offset: number, m: (typeof a)[number]) =>
      asm.push({ offset: String(offset), headers: m.headers, value: m.value as Buffer });
    expect(push(0, a[0])).toBeUndefined();
    // Another command completes while the first is still in assembly.
    const next = push(1, b[0]);
    expect(next && decodeCommand(next.value, 't')).toEqual(commands[0]);
    expect(asm.pendingFrom).toBe('0');
    for (let i = 1; i < a.length - 1; i++) expect(push(1 + i, a[i])).toBeUndefined();
    const whole = push(1 + a.length, a[a.length - 1]);
    expect(whole && decodeCommand(whole.value, 't')).toEqual({ kind: 'attrs', index: 'i', pql: 'x'.repeat(3000) });
    expect(whole?.firstOffset).toBe('0');
    expect(asm.pendingFrom).toBeUndefined();
    // A chunk from the middle of a run never starts one.
    expect(push(10 + a.length, a[1])).toBeUndefined();
    expect(asm.pendingFrom).toBeUndefined();
  });
});
