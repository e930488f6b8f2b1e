// Typed configuration from (lowest to highest precedence) defaults, a TOML or JSON file,
// environment variables (BITLEDGER_*, plus PILOSA_BIND / PILOSA_DATA_DIR for drop-in
// deployments) and command-line flags.
import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { LIMITS } from './limits.js';

export type FsyncPolicy = 'always' | 'interval' | 'never';

export interface Config {
  bind: string;
  dataDir: string;
  fsync: FsyncPolicy;
  fsyncIntervalMs: number;
  snapshotEveryEvents: number;
  snapshotEveryBytes: number;
  cacheRecalcIntervalMs: number;
  logLevel: string;
  kafkaBrokers: string[];
  kafkaMirrorTopic: string;
  /** Follow this mirror topic as a read-only replica. */
  replicaOf: string;
  /** local: a write is acked once durable here; kafka: also once the mirror topic has it. */
  kafkaMirrorAck: 'local' | 'kafka';
  maxBodyBytes: number;
}

export const DEFAULTS: Config = {
  bind: '127.0.0.1:10101',
  dataDir: './data',
  fsync: 'always',
  fsyncIntervalMs: 100,
  snapshotEveryEvents: 200_000,
  snapshotEveryBytes: 64 * 1024 * 1024,
  cacheRecalcIntervalMs: 10_000,
  logLevel: 'info',
  kafkaBrokers: [],
  kafkaMirrorTopic: '',
  replicaOf: '',
  kafkaMirrorAck: 'local',
  maxBodyBytes: LIMITS.maxBodyBytes,
};

type Key = keyof Config;
const KEYS: Record<string, Key> = {
  bind: 'bind',
  'data-dir': 'dataDir',
  fsync: 'fsync',
  'fsync-interval-ms': 'fsyncIntervalMs',
  'snapshot-every-events': 'snapshotEveryEvents',
  'snapshot-every-bytes': 'snapshotEveryBytes',
  'cache-recalc-interval-ms': 'cacheRecalcIntervalMs',
  'log-level': 'logLevel',
  'kafka-brokers': 'kafkaBrokers',
  'kafka-mirror-topic': 'kafkaMirrorTopic',
  'replica-of': 'replicaOf',
  'kafka-mirror-ack': 'kafkaMirrorAck',
  'max-body-bytes': 'maxBodyBytes',
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(argv: string[], env: NodeJS.ProcessEnv): Config {
  const flags = parseFlags(argv);
  const cfg: Config = { ...DEFAULTS };
  const file = flags.get('config') ?? env.BITLEDGER_CONFIG;
  if (file !== undefined) {
    const text = readFileSync(file, 'utf8');
    const data = (file.endsWith('.json') ? JSON.parse(text) : parseToml(text)) as Record<string, unknown>;
    for (const [k, v] of Object.entries(data)) set(cfg, k, String(Array.isArray(v) ? v.join(',') : v), `config file ${file}`);
  }
  if (env.PILOSA_BIND) set(cfg, 'bind', env.PILOSA_BIND, 'PILOSA_BIND');
  if (env.PILOSA_DATA_DIR) set(cfg, 'data-dir', env.PILOSA_DATA_DIR, 'PILOSA_DATA_DIR');
  for (const name of Object.keys(KEYS)) {
    const v = env[`BITLEDGER_${name.toUpperCase().replace(/-/g, '_')}`];
    if (v !== undefined && v !== '') set(cfg, name, v, 'environment');
  }
  for (const [k, v] of flags) if (k !== 'config') set(cfg, k, v, `flag --${k}`);
  return cfg;
}

function parseFlags(argv: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new ConfigError(`unexpected argument ${a}`);
    const eq = a.indexOf('=');
    if (eq > 0) out.set(a.slice(2, eq), a.slice(eq + 1));
    else {
      const v = argv[i + 1];
      if (v === undefined || v.startsWith('--')) throw new ConfigError(`flag ${a} needs a value`);
      out.set(a.slice(2), v);
      i++;
    }
  }
  return out;
}

function set(cfg: Config, name: string, value: string, source: string): void {
  const key = KEYS[name];
  if (key === undefined) throw new ConfigError(`unknown setting "${name}" (from ${source})`);
  const current = cfg[key];
  if (key === 'fsync') {
    if (value !== 'always' && value !== 'interval' && value !== 'never') throw new ConfigError(`fsync must be always, interval or never (from ${source})`);
    cfg.fsync = value;
  } else if (key === 'kafkaMirrorAck') {
    if (value !== 'local' && value !== 'kafka') throw new ConfigError(`kafka-mirror-ack must be local or kafka (from ${source})`);
    cfg.kafkaMirrorAck = value;
  } else if (Array.isArray(current)) {
    (cfg[key] as string[]) = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
  } else if (typeof current === 'number') {
    const n = Number(value);
    if (!Number.isFinite(n) || n < 0) throw new ConfigError(`${name} must be a non-negative number (from ${source})`);
    (cfg[key] as number) = n;
  } else (cfg[key] as string) = value;
}

/** Splits "host:port" (":10101" means all interfaces, as in Pilosa). */
export function parseBind(bind: string): { host: string; port: number } {
  const m = /^(.*):(\d+)$/.exec(bind.replace(/^https?:\/\//, ''));
  if (!m) throw new ConfigError(`bind must be host:port, got ${bind}`);
  return { host: m[1] === '' ? '0.0.0.0' : m[1].replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}
