# The platform's image (docs/deployment.md): bundled once in `build`, run by plain node with the production
# dependencies only, as the unprivileged `node` user, on a read-only root filesystem (only PF_DATA_DIR is written).
# Base images are pinned to an exact Node release, the LTS of .nvmrc; pin by digest too where the registry is reachable.

FROM node:26.10.0-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:26.10.0-slim AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:26.10.0-slim
ENV NODE_ENV=production PF_BIND=0.0.0.0 PF_DATA_DIR=/var/lib/pf PF_EMBEDDED_AGENT=0 PF_HTTP_PORT=8080 PF_RPC_PORT=8081 PF_METRICS_PORT=9464
WORKDIR /app
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
RUN mkdir -p /var/lib/pf && chown node:node /var/lib/pf
VOLUME /var/lib/pf
USER node
EXPOSE 8080 8081 9464
# /healthz is the liveness check (docs/operations.md, "Health and readiness"); node is the only program at hand.
HEALTHCHECK --interval=10s --timeout=3s --start-period=90s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PF_HTTP_PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM: the platform stops its servers and workers, then exits 0.
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
