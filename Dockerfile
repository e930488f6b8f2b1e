# bitledger server image (used by docker-compose.yml). Runs from TypeScript sources with tsx.
FROM node:20-bookworm

WORKDIR /app
ENV NODE_ENV=production

# Dependencies first, for layer caching. The repo's .npmrc is not copied: its nodedir points at
# the dev machine's Node headers; the full node image builds native addons (roaring,
# classic-level) with its own toolchain.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

COPY tsconfig.json ./
COPY proto ./proto
COPY migrations ./migrations
COPY src ./src

VOLUME /data
EXPOSE 10101

CMD ["npm", "start", "--", "--bind", "0.0.0.0:10101", "--data-dir", "/data"]
