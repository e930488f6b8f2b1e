// Cluster flags are checked together before anything is opened: each contradictory start gets
// one clear ConfigError, and a node without --cluster-name is not a cluster member.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';
import { clusterSettings } from '../../../src/cluster/settings.js';

const settingsOf = (argv: string[]) => clusterSettings(loadConfig(argv, {}));

describe('cluster settings', () => {
  it('is off without --cluster-name', () => {
    expect(settingsOf([])).toBeUndefined();
  });

  it('takes the flags and defaults', () => {
    const s = settingsOf(['--cluster-name', 'c1', '--kafka-brokers', '127.0.0.1:9092', '--replicas', '2']);
    expect(s).toMatchObject({ name: 'c1', replicas: 2, partitions: 64 });
  });

  it("takes the members' token from the token file, and refuses a file without a read-write one", () => {
    const dir = mkdtempSync(join(tmpdir(), 'bl-cluster-settings-'));
    try {
      const rw = join(dir, 'rw');
      writeFileSync(rw, '# comment\nro1 read-only\nrw1 read-write\nrw2 read-write\n');
      const ro = join(dir, 'ro');
      writeFileSync(ro, 'ro1 read-only\n');
      const base = ['--cluster-name', 'c1', '--kafka-brokers', 'k:1', '--auth-token-file'];
      expect(settingsOf([...base, rw])?.memberToken).toBe('rw1');
      expect(() => settingsOf([...base, ro])).toThrow(/no read-write token/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [['--cluster-name', 'c1'], /needs kafka-brokers/],
    [['--cluster-name', 'a.b', '--kafka-brokers', 'k:1'], /cluster-name must be/],
    [['--cluster-name', 'c1', '--kafka-brokers', 'k:1', '--replica-of', 't'], /exclude each other/],
    [['--cluster-name', 'c1', '--kafka-brokers', 'k:1', '--replicas', '0'], /replicas must be/],
    [['--cluster-name', 'c1', '--kafka-brokers', 'k:1', '--advertise', 'http://h:1/path'], /advertise must be/],
    [
      ['--cluster-name', 'c1', '--kafka-brokers', 'k:1', '--advertise', 'https://h:1'],
      /runs over http between members/,
    ],
    [
      ['--cluster-name', 'c1', '--kafka-brokers', 'k:1', '--tls-certificate', 'c.pem', '--tls-key', 'k.pem'],
      /runs over http between members/,
    ],
  ])('refuses %j', (argv, message) => {
    expect(() => settingsOf(argv)).toThrow(ConfigError);
    expect(() => settingsOf(argv)).toThrow(message);
  });
});
