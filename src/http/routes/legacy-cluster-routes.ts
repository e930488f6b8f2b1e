// Legacy (0.5–0.10) cluster routes: /hosts, /slices/max and /fragment/nodes, in shapes every 0.x
// client generation can read; in cluster mode the members, the shard's one holder to send to and
// the cluster's max slices, as /internal/nodes, /internal/fragment/nodes and /internal/shards/max.
import type { FastifyInstance } from 'fastify';
import protobuf from 'protobufjs';
import { boolArg, wantsProtobuf } from '../body.js';
import type { HttpContext } from '../context.js';
import { sendJson } from '../reply.js';
import { checkArgs } from './internal-routes.js';
import { parseShard } from '../../domain/shard.js';
import { legacyShape } from './legacy-node-json.js';

type Query = Record<string, string>;

export function legacyClusterRoutes(app: FastifyInstance, ctx: HttpContext): void {
  app.get('/hosts', async (_req, reply) => sendJson(reply, ctx.topology.nodes().map(legacyShape)));

  app.get<{ Querystring: Query }>('/fragment/nodes', { config: { errorShape: 'query' } }, async (req, reply) => {
    checkArgs(req.query, ['index', 'slice'], []);
    const slice = parseShard(req.query.slice, 'slice');
    return sendJson(reply, ctx.topology.shardNodes(req.query.index, slice).map(legacyShape));
  });

  // 0.5–0.8 read {"maxSlices":…} (or protobuf MaxSlicesResponse), 0.9+ {"standard":…,"inverse":…}.
  // Inverse views (inverseEnabled frames) count their own maxima: their shards number rows.
  app.get<{ Querystring: Query }>('/slices/max', async (req, reply) => {
    checkArgs(req.query, [], ['inverse']);
    const r = await ctx.topology.shardsMax({});
    const [standard, inverse] = [r.standard, r.inverse ?? {}];
    const maxSlices = boolArg(req.query.inverse) ? inverse : standard;
    if (wantsProtobuf(req.headers.accept))
      return reply
        .code(200)
        .type('application/x-protobuf')
        .send(Buffer.from(encodeMaxSlices(maxSlices)));
    return sendJson(reply, { standard, inverse, maxSlices });
  });
}

/** 0.x internal MaxSlicesResponse { map<string, uint64> MaxSlices = 1; } */
function encodeMaxSlices(m: { [index: string]: number }): Uint8Array {
  const w = protobuf.Writer.create();
  for (const [k, v] of Object.entries(m)) {
    w.uint32((1 << 3) | 2).fork();
    w.uint32((1 << 3) | 2).string(k);
    w.uint32((2 << 3) | 0).uint64(v);
    w.ldelim();
  }
  return w.finish();
}
