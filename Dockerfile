# bitledger server image (used by docker-compose.yml): compiled in a build stage, run with node.
FROM node:20-bookworm AS build
WORKDIR /app
# The repo's .npmrc is not copied: its nodedir points at the dev machine's Node headers; the full
# node image builds the native addons (roaring, classic-level) with its own toolchain.
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json ./
COPY proto ./proto
COPY migrations ./migrations
COPY src ./src
COPY test ./test
COPY bench ./bench
RUN npx tsc -p tsconfig.json && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/proto ./proto
COPY --from=build /app/dist ./dist
VOLUME /data
EXPOSE 10101
CMD ["node", "dist/src/main.js", "server", "--bind", "0.0.0.0:10101", "--data-dir", "/data"]
