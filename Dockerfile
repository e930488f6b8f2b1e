# bitledger server image (used by docker-compose.yml). Build stage: install with the toolchain
# (roaring is compiled by node-gyp against the image's own Node headers) and compile src only
# (tsconfig.build.json: no tests, no benches). Run stage: production dependencies and dist/src.
FROM node:20-bookworm AS build
WORKDIR /app
ENV npm_package_config_node_gyp_nodedir=/usr/local
COPY package.json package-lock.json .npmrc ./
# The allocator addon (malloc_trim, src/util/heap-trim.ts) is built by npm ci's install script.
COPY src/native ./src/native
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY proto ./proto
COPY migrations ./migrations
COPY src ./src
# The web console's static files, served at / (src/http/static-assets.ts).
COPY web ./web
RUN npx tsc -p tsconfig.build.json && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/proto ./proto
COPY --from=build /app/dist ./dist
COPY --from=build /app/src/native/build/Release/malloc_trim.node ./src/native/build/Release/
COPY --from=build /app/web ./web
# Runs as the image's unprivileged user; /data is the volume (log, snapshots, node id).
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 10101
# Ready = replay finished, not stopping, replica/mirror healthy (GET /ready; no curl in -slim).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:10101/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "--initial-old-space-size=64", "dist/src/main.js", "server", "--bind", "0.0.0.0:10101", "--data-dir", "/data"]
