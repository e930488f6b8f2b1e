// Node shapes for the internal and legacy cluster routes (a one-node cluster, its own coordinator).
import type { HttpContext } from '../context.js';

/** Pilosa 1.4 Node, as in /status. */
export function nodeJson(ctx: HttpContext): { [k: string]: string | boolean | { [k: string]: string | number } } {
  const n = ctx.node();
  return { id: n.id, uri: { scheme: n.scheme, host: n.host, port: n.port }, isCoordinator: true, state: 'READY' };
}

/**
 * A node every 0.x client generation can read: 0.5 `{host, internalHost}`, 0.7 `{host}`, 0.8
 * `{scheme, host}`, 0.9 `{id, uri, isCoordinator}`. JSON decoders of each ignore the others' keys.
 */
export function legacyNodeJson(ctx: HttpContext): NodeJson {
  return legacyShape(nodeJson(ctx));
}

type NodeJson = { [k: string]: string | boolean | { [k: string]: string | number } };

/** A 1.4 Node (cluster mode's members) in the shape every 0.x generation reads, as above. */
export function legacyShape(node: NodeJson): NodeJson {
  const uri = node.uri as { scheme: string; host: string; port: number };
  return { ...node, scheme: uri.scheme, host: `${uri.host}:${uri.port}`, internalHost: '' };
}
