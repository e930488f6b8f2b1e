// Typed configuration from (lowest to highest precedence) defaults, a TOML or JSON file (ours or
// Pilosa's), environment variables (BITLEDGER_*, plus PILOSA_BIND / PILOSA_DATA_DIR for drop-in
// deployments) and command-line flags. The settings themselves are the table in settings.ts.
import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { parseDurationMs } from './duration.js';

export { parseDurationMs } from './duration.js';
import { type SettingRow, SETTINGS, SETTING_BY_NAME, camel, envName, DEFAULTS, type Config } from './settings.js';

export { DEFAULTS, type Config, type FsyncPolicy } from './settings.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Pilosa settings with no equivalent here: a Pilosa config file that has them still loads. */
const PILOSA_ONLY = new Set([
  'log-path',
  'verbose',
  'max-writes-per-request',
  'max-map-count',
  'max-file-count',
  'max-query-memory',
  'name',
  'advertise-grpc',
  'bind-grpc',
  'long-query-time',
  'query-history-length',
  'handler',
  'cluster',
  'gossip',
  'anti-entropy',
  'metric',
  'tracing',
  'profile',
  'translation',
  'tls',
  'postgres',
  'etcd',
  'storage',
  'auth',
  'sql',
  'diagnostics',
]);

const ALIASES: ReadonlyMap<string, SettingRow> = new Map(
  SETTINGS.flatMap((s) => ((s as SettingRow).pilosa ?? []).map((a) => [a, s as SettingRow] as const)),
);

/**
 * `argv` holds only setting flags (`--name value` or `--name=value`, plus `--config FILE`).
 * `warn` receives one line naming what a config file had that is ignored here.
 */
export function loadConfig(
  argv: string[],
  env: NodeJS.ProcessEnv,
  warn: (line: string) => void = () => undefined,
): Config {
  const flags = parseFlags(argv);
  const cfg: Config = structuredClone(DEFAULTS);
  const file = flags.get('config') ?? (env.BITLEDGER_CONFIG || undefined);
  if (file !== undefined) loadFile(cfg, file, warn);
  for (const s of SETTINGS as readonly SettingRow[]) {
    for (const name of s.env ?? []) if (env[name]) set(cfg, s.name, env[name], name);
  }
  for (const s of SETTINGS) {
    const v = env[envName(s.name)];
    if (v !== undefined && v !== '') set(cfg, s.name, v, envName(s.name));
  }
  for (const [k, v] of flags) if (k !== 'config') set(cfg, k, v, `flag --${k}`);
  return cfg;
}

/** loadConfig with this process's environment (`withEnv`), or none (commands without settings). */
export function loadConfigFromProcess(argv: string[], withEnv: boolean, warn?: (line: string) => void): Config {
  return loadConfig(argv, withEnv ? process.env : {}, warn);
}

function loadFile(cfg: Config, file: string, warn: (line: string) => void): void {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(
      `config file ${file}: ${code === 'ENOENT' ? 'not found' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : String(err)}`,
    );
  }
  let data: Record<string, unknown>;
  try {
    data = (file.endsWith('.json') ? JSON.parse(text) : parseToml(text)) as Record<string, unknown>;
  } catch (err) {
    const first = String((err as Error).message).split('\n')[0];
    throw new ConfigError(`config file ${file}: not valid ${file.endsWith('.json') ? 'JSON' : 'TOML'}: ${first}`);
  }
  const ignored: string[] = [];
  const source = `config file ${file}`;
  for (const [k, v] of Object.entries(data)) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      // A [section]: its keys count only through a Pilosa alias ("tls.certificate").
      const unused = Object.entries(v as Record<string, unknown>).filter(
        ([sub, sv]) => !setAlias(cfg, `${k}.${sub}`, sv, source),
      );
      if (unused.length === Object.keys(v).length) ignored.push(`[${k}]`);
      else ignored.push(...unused.map(([sub]) => `[${k}] ${sub}`));
    } else if (SETTING_BY_NAME.has(k)) set(cfg, k, fileValue(v), source);
    else if (setAlias(cfg, k, v, source)) continue;
    else if (PILOSA_ONLY.has(k)) ignored.push(k);
    else throw new ConfigError(`${source}: unknown setting "${k}" (bitledger --help lists them)`);
  }
  if (ignored.length > 0) warn(`${source}: ignoring settings bitledger does not have: ${ignored.join(', ')}`);
}

function setAlias(cfg: Config, key: string, v: unknown, source: string): boolean {
  const s = ALIASES.get(key);
  if (s === undefined) return false;
  set(cfg, s.name, fileValue(v), `${source} (Pilosa's ${key})`);
  return true;
}

const fileValue = (v: unknown): string => String(Array.isArray(v) ? v.join(',') : v);

function parseFlags(argv: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new ConfigError(`unexpected argument ${a}`);
    const eq = a.indexOf('=');
    if (eq > 0) out.set(a.slice(2, eq), a.slice(eq + 1));
    else {
      const v = argv[i + 1];
      if ((v === undefined || v.startsWith('--')) && typeof SETTING_BY_NAME.get(a.slice(2))?.default === 'boolean') {
        out.set(a.slice(2), 'true'); // a switch: --accept-data-loss alone means true
        continue;
      }
      if (v === undefined || v.startsWith('--')) throw new ConfigError(`flag ${a} needs a value`);
      out.set(a.slice(2), v);
      i++;
    }
  }
  return out;
}

function set(cfg: Config, name: string, value: string, source: string): void {
  // Pilosa's dotted spelling (--tls.certificate) names the same setting as ours.
  const s = SETTING_BY_NAME.get(name) ?? ALIASES.get(name);
  if (s === undefined) throw new ConfigError(`unknown setting "${name}" (from ${source}; bitledger --help lists them)`);
  const key = camel(s.name) as keyof Config;
  const target = cfg as unknown as Record<string, unknown>;
  if (s.values !== undefined) {
    if (!s.values.includes(value)) {
      const named = s.values.filter((v) => v !== '');
      const empty = named.length < s.values.length ? ' (or empty)' : '';
      throw new ConfigError(
        `${name} must be ${named.slice(0, -1).join(', ')} or ${named[named.length - 1]}${empty} (from ${source})`,
      );
    }
    target[key] = value;
  } else if (Array.isArray(s.default)) {
    target[key] = value
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
  } else if (typeof s.default === 'boolean') {
    if (value !== 'true' && value !== 'false') throw new ConfigError(`${name} must be true or false (from ${source})`);
    target[key] = value === 'true';
  } else if (s.duration !== undefined) {
    const ms = parseDurationMs(value, s.duration === 's' ? 1000 : 1);
    if (ms === undefined)
      throw new ConfigError(
        `${name} must be a duration such as ${s.shown ?? '60s'} or 500ms, or a number of ${s.duration === 's' ? 'seconds' : 'ms'} (from ${source})`,
      );
    target[key] = ms;
  } else if (typeof s.default === 'number') {
    const n = s.name.endsWith('-ms') ? (parseDurationMs(value) ?? Number.NaN) : Number(value);
    if (!Number.isFinite(n) || n < 0) throw new ConfigError(`${name} must be a non-negative number (from ${source})`);
    target[key] = n;
  } else target[key] = value;
}

/** Splits "host:port" (":10101" means all interfaces, as in Pilosa). */
export function parseBind(bind: string): { host: string; port: number } {
  const m = /^(.*):(\d+)$/.exec(bind.replace(/^https?:\/\//, ''));
  if (!m) throw new ConfigError(`bind must be host:port, got ${bind}`);
  return { host: m[1] === '' ? '0.0.0.0' : m[1].replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}
