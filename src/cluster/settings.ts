// The cluster flags, checked together (docs/CLUSTER.md): what --cluster-name needs, what it
// excludes, and the advertised URL (from --advertise, else from the address actually bound).
import { ConfigError, type Config } from '../config/config.js';
import { memberToken } from '../http/security.js';

export interface ClusterSettings {
  name: string;
  /** --advertise as given, normalized (no trailing slash); '' when derived from the bind. */
  advertise: string;
  replicas: number;
  partitions: number;
  /** The bearer token members use with each other (from --auth-token-file); undefined: none. */
  memberToken?: string;
}

/** Largest --cluster-partitions: Kafka copes with more, but every node reads every end offset. */
const MAX_PARTITIONS = 10_000;
/** A cluster name becomes two topic names (NAME.meta, NAME.log) and a group id. */
const NAME_RE = /^[A-Za-z0-9_-]{1,200}$/;

/** undefined when the node is not a cluster member; ConfigError for a contradictory start. */
export function clusterSettings(cfg: Config): ClusterSettings | undefined {
  if (cfg.clusterName === '') return undefined;
  const name = cfg.clusterName;
  if (!NAME_RE.test(name))
    throw new ConfigError(
      `cluster-name must be 1 to 200 letters, digits, "_" or "-" (it names Kafka topics ${name}.meta and ${name}.log), got "${name}"`,
    );
  if (cfg.kafkaBrokers.length === 0)
    throw new ConfigError('cluster-name needs kafka-brokers (cluster mode runs on Kafka)');
  if (cfg.replicaOf !== '')
    throw new ConfigError(
      'cluster-name and replica-of exclude each other: a cluster member is not a read-only replica',
    );
  if (!Number.isInteger(cfg.replicas) || cfg.replicas < 1)
    throw new ConfigError(`replicas must be a whole number ≥ 1, got ${cfg.replicas}`);
  if (!Number.isInteger(cfg.clusterPartitions) || cfg.clusterPartitions < 1 || cfg.clusterPartitions > MAX_PARTITIONS)
    throw new ConfigError(
      `cluster-partitions must be a whole number from 1 to ${MAX_PARTITIONS}, got ${cfg.clusterPartitions}`,
    );
  // Members call each other over plain http (the read fan-out's kept connections,
  // membership/member-connection.ts): a member serving https, or advertised as https, would
  // take its part in reads that then fail. Refused here, at start, until those calls speak TLS.
  if (cfg.tlsCertificate !== '' || /^https:/i.test(cfg.advertise))
    throw new ConfigError(
      'cluster mode runs over http between members: start cluster nodes without tls-certificate and with an http advertise URL (put a TLS-terminating proxy in front for clients that need https)',
    );
  // With tokens, members call each other with the file's first read-write token (every member
  // reads the same file): a file without one would leave them answering each other 401.
  const token = cfg.authTokenFile === '' ? undefined : memberToken(cfg.authTokenFile);
  if (cfg.authTokenFile !== '' && token === undefined)
    throw new ConfigError(
      `auth-token-file ${cfg.authTokenFile} has no read-write token: cluster members use the first one with each other`,
    );
  return {
    name,
    advertise: cfg.advertise === '' ? '' : advertiseUrl(cfg.advertise),
    replicas: cfg.replicas,
    partitions: cfg.clusterPartitions,
    ...(token === undefined ? {} : { memberToken: token }),
  };
}

/** "host:port" or "http(s)://host:port" → "scheme://host:port" (Pilosa's advertise has no scheme). */
export function advertiseUrl(value: string, scheme = 'http'): string {
  const withScheme = /^[a-z]+:\/\//i.test(value) ? value : `${scheme}://${value}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new ConfigError(`advertise must be a URL such as http://10.0.0.5:10101 or host:port, got "${value}"`);
  }
  if (
    (u.protocol !== 'http:' && u.protocol !== 'https:') ||
    u.hostname === '' ||
    (u.pathname !== '/' && u.pathname !== '')
  )
    throw new ConfigError(`advertise must be http(s)://host:port with no path, got "${value}"`);
  if (u.hostname === '0.0.0.0' || u.hostname === '[::]')
    throw new ConfigError(`advertise must name an address other nodes can reach, not ${u.hostname}`);
  return `${u.protocol}//${u.host}`;
}

/** The advertised URL when --advertise is not given: the bound address, as other local nodes reach it. */
export function derivedAdvertise(scheme: string, bindHost: string, port: number): string {
  const host = bindHost === '0.0.0.0' || bindHost === '' ? '127.0.0.1' : bindHost === '::' ? '[::1]' : bindHost;
  return `${scheme}://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}
