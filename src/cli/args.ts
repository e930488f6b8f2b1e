// Flags of the operator commands (restore, backup, log): --name value or --name=value, only the
// names a command knows; anything else is a UsageError with one line saying what is wrong.
import { ConfigError } from '../config/config.js';
import { parseTimeArg } from '../engine/history.js';

/** A bad command line: printed as one line, exit status 2, never a stack trace. */
export class UsageError extends ConfigError {
  override name = 'UsageError';
}

export function parseArgs(command: string, argv: readonly string[], known: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new UsageError(`${command}: unexpected argument ${a}`);
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
    if (!known.includes(name))
      throw new UsageError(`${command}: unknown flag --${name} (expected: ${known.map((k) => `--${k}`).join(', ')})`);
    const value: string | undefined = eq > 0 ? a.slice(eq + 1) : argv[i + 1];
    if (eq < 0) i++;
    if (value === undefined || value === '' || (eq < 0 && value.startsWith('--')))
      throw new UsageError(`${command}: flag --${name} needs a value`);
    out.set(name, value);
  }
  return out;
}

export function required(command: string, args: Map<string, string>, name: string): string {
  const v = args.get(name);
  if (v === undefined) throw new UsageError(`${command}: --${name} is required`);
  return v;
}

export function seqArg(command: string, args: Map<string, string>, name: string): number | undefined {
  const v = args.get(name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)))
    throw new UsageError(`${command}: --${name} must be a sequence number, got ${v}`);
  return Number(v);
}

export function timeArg(command: string, args: Map<string, string>, name: string): number | undefined {
  const v = args.get(name);
  if (v === undefined) return undefined;
  const ms = parseTimeArg(v);
  if (ms === undefined)
    throw new UsageError(
      `${command}: --${name} must be an RFC 3339 time (2026-11-24T14:03:00Z) or Unix seconds, got ${v}`,
    );
  return ms;
}
