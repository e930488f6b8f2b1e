// Help text and the README's flag table, generated from the settings table and the command
// table so neither can drift from what the parser accepts.
import type { CommandSpec } from './command-line.js';
import { DEFAULTS, SETTINGS, type SettingRow, camel, envName } from '../config/settings.js';

function shownDefault(s: SettingRow): string {
  if (s.shown !== undefined) return s.shown;
  const v = (DEFAULTS as unknown as Record<string, unknown>)[camel(s.name)];
  return Array.isArray(v) ? v.join(',') : String(v);
}

const envNames = (s: SettingRow): string[] => [envName(s.name), ...(s.env ?? [])];

export function generalHelp(commands: readonly CommandSpec[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'bitledger: a durable, event-sourced bitmap index server speaking the Pilosa HTTP API',
    '',
    'usage: bitledger [COMMAND] [flags]      (COMMAND defaults to server)',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "bitledger COMMAND --help lists a command's flags.",
    '',
    settingsHelp(),
  ].join('\n');
}

export function commandHelp(c: CommandSpec): string {
  const lines = [
    `usage: bitledger ${c.name}${c.flags.length > 0 || c.settings ? ' [flags]' : ''}${c.positional !== undefined ? ` ${c.positional}` : ''}`,
    '',
    c.summary,
    '',
  ];
  if (c.flags.length > 0) {
    const left = c.flags.map(
      (f) =>
        `${f.short !== undefined ? `-${f.short}, ` : '    '}--${f.name}${f.value !== undefined ? ` ${f.value}` : ''}`,
    );
    const width = Math.max(...left.map((l) => l.length));
    lines.push(
      'flags:',
      ...c.flags.map(
        (f, i) => `  ${left[i].padEnd(width)}  ${f.help}${f.default !== undefined ? ` (default ${f.default})` : ''}`,
      ),
      '',
    );
  }
  if (c.settings) lines.push(settingsHelp());
  return lines.join('\n');
}

function settingsHelp(): string {
  const rows = (SETTINGS as readonly SettingRow[]).map((s) => [
    `--${s.name} ${s.values !== undefined ? s.values.join('|') : Array.isArray(s.default) ? 'LIST' : typeof s.default === 'number' ? 'N' : 'VALUE'}`,
    s,
  ]) as [string, SettingRow][];
  const width = Math.max(...rows.map(([l]) => l.length), '--config FILE'.length);
  return [
    'settings (flag > environment > config file > default):',
    ...rows.map(
      ([l, s]) =>
        `  ${l.padEnd(width)}  ${s.help}\n  ${''.padEnd(width)}  env ${envNames(s).join(', ')}; default ${shownDefault(s)}`,
    ),
    `  ${'--config FILE'.padEnd(width)}  TOML or JSON file with the same keys, or a Pilosa config file\n  ${''.padEnd(width)}  env BITLEDGER_CONFIG`,
  ].join('\n');
}

/** The README's flag table (markdown), between its generated-table markers. */
export function settingsMarkdown(): string {
  const code = (s: string): string => `\`${s}\``;
  return [
    '| flag | env | default | Pilosa config key | meaning |',
    '|---|---|---|---|---|',
    ...(SETTINGS as readonly SettingRow[]).map(
      (s) =>
        `| ${code(`--${s.name}`)} | ${envNames(s).map(code).join(', ')} | ${s.shown ?? code(shownDefault(s))} | ${(s.pilosa ?? []).map(code).join(', ')} | ${s.help.replace(/\|/g, '\\|')} |`,
    ),
    '| `--config FILE` | `BITLEDGER_CONFIG` | | | TOML or JSON file with the same keys (`bind = "…"`), or a Pilosa config file |',
  ].join('\n');
}
