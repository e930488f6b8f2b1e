// Splits a command's arguments into its own flags, the server settings it accepts (passed on to
// loadConfig) and positional arguments, from the command's table entry.
import { ConfigError } from '../config/config.js';

export interface CommandFlag {
  name: string;
  short?: string;
  /** Placeholder of the value ("URL"); absent: a switch (--create). */
  value?: string;
  help: string;
  default?: string;
}

export interface CommandSpec {
  name: string;
  summary: string;
  /** Accepts every server setting (--data-dir, --config …). */
  settings: boolean;
  flags: readonly CommandFlag[];
  /** Placeholder for positional arguments ("FILE.csv…"); absent: none accepted. */
  positional?: string;
}

export interface CommandLine {
  help: boolean;
  /** Own flags by long name; switches are "true". */
  flags: Map<string, string>;
  settingArgs: string[];
  positional: string[];
}

export function parseCommandLine(spec: CommandSpec, argv: string[]): CommandLine {
  const out: CommandLine = { help: false, flags: new Map(), settingArgs: [], positional: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') {
      out.help = true;
      continue;
    }
    if (!a.startsWith('-') || a === '-') {
      if (spec.positional === undefined) throw new ConfigError(`${spec.name}: unexpected argument ${a}`);
      out.positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(0, eq) : a;
    const flag = spec.flags.find((f) => `--${f.name}` === name || (f.short !== undefined && `-${f.short}` === name));
    if (flag === undefined) {
      if (!spec.settings || !a.startsWith('--'))
        throw new ConfigError(`${spec.name}: unknown flag ${name} (bitledger ${spec.name} --help lists them)`);
      // A setting: loadConfig checks its name and value.
      out.settingArgs.push(a);
      if (eq < 0 && argv[i + 1] !== undefined && !argv[i + 1].startsWith('--')) out.settingArgs.push(argv[++i]);
      continue;
    }
    if (flag.value === undefined) {
      if (eq > 0) throw new ConfigError(`${spec.name}: flag --${flag.name} takes no value`);
      out.flags.set(flag.name, 'true');
      continue;
    }
    const v = eq > 0 ? a.slice(eq + 1) : argv[++i];
    if (v === undefined || (eq < 0 && v.startsWith('-') && v !== '-'))
      throw new ConfigError(`${spec.name}: flag ${name} needs a value (${flag.value})`);
    out.flags.set(flag.name, v);
  }
  return out;
}
