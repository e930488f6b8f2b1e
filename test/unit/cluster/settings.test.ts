// Cluster flags are checked together before anything is opened: each contradictory start gets
// one clear ConfigError, and a node without --cluster-name is not a cluster member.
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

  it.each([
    [['--cluster-name', 'c1'], /needs kafka-brokers/],
    [['--cluster-name', 'a.b', '--kafka-brokers', 'k:1'], /cluster-name must be/],
    [['--cluster-name', 'c1', '--kafka-brokers', 'k:1', '--replica-of', 't'], /exclude each other/],
    [['--cluster-name', 'c1', '--kafka-brokers', 'k:1', '--auth-token-file', '/x'], /auth-token-file/],
    [['--cluster-name', 'c1', '--kafka-brokers', 'k:1', '--replicas', '0'], /replicas must be/],
    [['--cluster-name', 'c1', '--kafka-brokers', 'k:1', '--advertise', 'http://h:1/path'], /advertise must be/],
  ])('refuses %j', (argv, message) => {
    expect(() => settingsOf(argv)).toThrow(ConfigError);
    expect(() => settingsOf(argv)).toThrow(message);
  });
});
