// Configuration: defaults, a TOML or JSON file, BITLEDGER_* and PILOSA_* environment variables
// and flags, in that order of precedence; bad values are refused with a clear message.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, DEFAULTS, loadConfig, parseBind } from '../../../src/config/config.js';
import { removeDir, tempDir } from '../../helpers/temp.js';

let dir = '';
afterEach(() => removeDir(dir));

describe('config', () => {
  it('defaults to 127.0.0.1:10101, ./data and fsync always', () => {
    expect(loadConfig([], {})).toEqual(DEFAULTS);
    expect(DEFAULTS).toMatchObject({ bind: '127.0.0.1:10101', dataDir: './data', fsync: 'always' });
  });

  it('layers file < environment < flags, and accepts Pilosa variable names', () => {
    dir = tempDir();
    const toml = join(dir, 'bitledger.toml');
    writeFileSync(
      toml,
      'bind = "127.0.0.1:2000"\ndata-dir = "/from/file"\nfsync = "interval"\nsnapshot-every-events = 10\n',
    );
    expect(loadConfig(['--config', toml], {})).toMatchObject({
      bind: '127.0.0.1:2000',
      dataDir: '/from/file',
      fsync: 'interval',
      snapshotEveryEvents: 10,
    });
    expect(loadConfig(['--config', toml], { PILOSA_BIND: '127.0.0.1:3000', PILOSA_DATA_DIR: '/pilosa' })).toMatchObject(
      { bind: '127.0.0.1:3000', dataDir: '/pilosa' },
    );
    expect(
      loadConfig(['--config', toml], { PILOSA_BIND: '127.0.0.1:3000', BITLEDGER_BIND: '127.0.0.1:4000' }).bind,
    ).toBe('127.0.0.1:4000');
    expect(
      loadConfig(['--config', toml, '--bind', '127.0.0.1:5000', '--fsync=never'], { BITLEDGER_BIND: '127.0.0.1:4000' }),
    ).toMatchObject({ bind: '127.0.0.1:5000', fsync: 'never' });
    const json = join(dir, 'bitledger.json');
    writeFileSync(json, JSON.stringify({ 'kafka-brokers': ['a:1', 'b:2'], 'log-level': 'warn' }));
    expect(loadConfig(['--config', json], {})).toMatchObject({ kafkaBrokers: ['a:1', 'b:2'], logLevel: 'warn' });
  });

  it('refuses unknown settings and bad values', () => {
    expect(() => loadConfig(['--nope', '1'], {})).toThrow(ConfigError);
    expect(() => loadConfig(['--fsync', 'sometimes'], {})).toThrow(/fsync must be always, interval or never/);
    expect(() => loadConfig(['--snapshot-every-events', '-1'], {})).toThrow(/non-negative number/);
    expect(() => loadConfig(['--bind'], {})).toThrow(/needs a value/);
    expect(() => parseBind('nohost')).toThrow(/host:port/);
  });

  it('reads the history window as a duration (flag, env, file) and its byte cap', () => {
    expect(DEFAULTS.historyRetention).toBe(24 * 3_600_000);
    expect(DEFAULTS.historyRetentionBytes).toBe(0);
    expect(loadConfig(['--history-retention', '90m'], {}).historyRetention).toBe(90 * 60_000);
    expect(
      loadConfig([], { BITLEDGER_HISTORY_RETENTION: '7d', BITLEDGER_HISTORY_RETENTION_BYTES: '1000000' }),
    ).toMatchObject({ historyRetention: 7 * 86_400_000, historyRetentionBytes: 1_000_000 });
    expect(loadConfig(['--history-retention=3600'], {}).historyRetention).toBe(3_600_000);
    dir = tempDir();
    const toml = join(dir, 'h.toml');
    writeFileSync(toml, 'history-retention = "2h"\n');
    expect(loadConfig(['--config', toml], {}).historyRetention).toBe(7_200_000);
    expect(() => loadConfig(['--history-retention', 'a day'], {})).toThrow(/history-retention must be a duration/);
  });

  it('reads --legacy-release and --kafka-mirror-ack-timeout', () => {
    expect(loadConfig(['--legacy-release', '0.10', '--kafka-mirror-ack-timeout', '2500'], {})).toMatchObject({
      legacyRelease: '0.10',
      kafkaMirrorAckTimeout: 2500,
    });
    expect(loadConfig([], { BITLEDGER_LEGACY_RELEASE: '0.7' }).legacyRelease).toBe('0.7');
    expect(() => loadConfig(['--legacy-release', '1.0'], {})).toThrow(
      /legacy-release must be 0.5, 0.6, 0.7, 0.8, 0.9 or 0.10/,
    );
    expect(() => loadConfig(['--kafka-mirror-ack-timeout', 'soon'], {})).toThrow(
      /kafka-mirror-ack-timeout must be a duration/,
    );
  });

  it('parses bind addresses like Pilosa (":port" is every interface)', () => {
    expect(parseBind(':10101')).toEqual({ host: '0.0.0.0', port: 10101 });
    expect(parseBind('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseBind('http://localhost:8080')).toEqual({ host: 'localhost', port: 8080 });
  });
});

describe('Pilosa config files', () => {
  it('map known keys, convert durations, and name the ignored sections in one warning', () => {
    dir = tempDir();
    const file = join(dir, 'pilosa.toml');
    writeFileSync(
      file,
      'data-dir = "/var/pilosa"\nbind = "localhost:10101"\nlog-path = "/var/log/pilosa.log"\n[cluster]\n  replicas = 1\n  long-query-time = "1m30s"\n[gossip]\n  port = 14000\n[anti-entropy]\n  interval = "10m0s"\n',
    );
    const warnings: string[] = [];
    const cfg = loadConfig(['--config', file], {}, (w) => warnings.push(w));
    expect(cfg).toMatchObject({ dataDir: '/var/pilosa', bind: 'localhost:10101', slowQueryMs: 90_000 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('log-path');
    expect(warnings[0]).toContain('[cluster] replicas');
    expect(warnings[0]).toContain('[gossip]');
    expect(warnings[0]).toContain('[anti-entropy]');
  });

  it("refuse a top-level key that is neither ours nor Pilosa's, and a missing or malformed file, in one line", () => {
    dir = tempDir();
    const bogus = join(dir, 'bogus.toml');
    writeFileSync(bogus, 'bind = "127.0.0.1:1"\nfsnyc = "never"\n');
    expect(() => loadConfig(['--config', bogus], {})).toThrow(/unknown setting "fsnyc"/);
    expect(() => loadConfig(['--config', join(dir, 'missing.toml')], {})).toThrow(/missing.toml: not found/);
    const broken = join(dir, 'broken.toml');
    writeFileSync(broken, 'bind = \n');
    expect(() => loadConfig(['--config', broken], {})).toThrow(/not valid TOML: [^\n]*$/);
    expect(() => loadConfig(['--slow-query-ms', '5 parsecs'], {})).toThrow(/non-negative number/);
  });
});
