// The node shape of the legacy cluster routes (legacy-cluster-routes.ts).
import type { PilosaNodeJson } from '../topology.js';

/**
 * A 1.4 Node (http/topology.ts) in a shape every 0.x client generation can read: 0.5
 * `{host, internalHost}`, 0.7 `{host}`, 0.8 `{scheme, host}`, 0.9 `{id, uri, isCoordinator}`.
 * JSON decoders of each ignore the others' keys.
 */
export function legacyShape(node: PilosaNodeJson): PilosaNodeJson {
  const uri = node.uri as { scheme: string; host: string; port: number };
  return { ...node, scheme: uri.scheme, host: `${uri.host}:${uri.port}`, internalHost: '' };
}
