# syntax=docker/dockerfile:1
# Payment service: API, payment pages, cabinet, operator API (node dist/main.js) and workers
# (node dist/worker-main.js) from one image, compiled JavaScript only (no TypeScript loader).
# PostgreSQL is external (DATABASE_URL). WEB_CONCURRENCY=N runs N API processes.

# ---- build: install every dependency, generate the Prisma client, compile to dist/ ----
FROM node:22-bookworm-slim AS build
WORKDIR /app
# prisma generate needs no schema engine: point it at a dummy file (see DESIGN.md "Stack").
ENV PRISMA_SCHEMA_ENGINE_BINARY=/app/prisma/.dummy-engine
COPY package.json package-lock.json prisma.config.ts tsconfig.json tsconfig.build.json ./
COPY prisma ./prisma
RUN touch prisma/.dummy-engine \
 && npm ci --no-audit --no-fund \
 && npm run generate
COPY scripts ./scripts
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# ---- runtime: production dependencies, dist/ and the migrations (read from prisma/migrations) ----
# dist/main.js and dist/worker-main.js are bundles (scripts/build.mjs); node_modules is still
# needed for what they leave out (bcrypt, Prisma's query compiler, the embedded PostgreSQL) and
# for the files bundled packages read from their own directory (Swagger UI's static files).
# NODE_COMPILE_CACHE (Node >= 22.1): V8 keeps the compiled code on disk, so a restart and each
# WEB_CONCURRENCY process skip most of the compiling (docs/performance.md).
# NODE_OPTIONS=--max-semi-space-size=2: V8's young generation capped at 2 MB per semi-space, as
# `npm run start:prod` runs; every process of the image gets it (the API, its cluster processes,
# the workers' command in docker-compose.yml): peak RSS of one API process under 150 MB
# (docs/adr/0053-runtime-memory-flags.md, docs/adr/0076-young-generation-2-mb.md).
FROM node:22-bookworm-slim AS runtime
# T-Bank's API hosts chain to the Russian Trusted Root CA (НУЦ Минцифры), which neither Node's
# bundled roots nor Debian's ca-certificates carry (`apt-cache search` finds no package with it):
# without it every T-Bank call fails its TLS handshake. The root is fetched at build time from
# its official address (Gosuslugi's gu-st.ru) and pinned by its SHA-256 (the same digest two
# independent public pins of that file give), so a changed file fails the build; Node adds it to
# its own roots through NODE_EXTRA_CA_CERTS (docs/adr/0089-transport-to-tbank.md). ADD --checksum
# needs BuildKit's Dockerfile syntax 1.6 or later (the `syntax=docker/dockerfile:1` line above).
ADD --checksum=sha256:936a43fea6e8e525bcc0f81acd9c3d21b4fc4b9b68acea7906d698005afc6504 --chmod=644 \
    https://gu-st.ru/content/lending/russian_trusted_root_ca_pem.crt /usr/local/share/ca-certificates/russian_trusted_root_ca.crt
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    LOG_FORMAT=json \
    NODE_COMPILE_CACHE=/tmp/node-compile-cache \
    NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/russian_trusted_root_ca.crt \
    NODE_OPTIONS=--max-semi-space-size=2
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/prisma ./prisma
COPY --from=build --chown=node:node /app/dist ./dist
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# `npm run start:prod` without npm in between, so SIGTERM reaches the process (graceful shutdown).
CMD ["node", "dist/main.js"]
