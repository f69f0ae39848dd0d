# syntax=docker/dockerfile:1
#
# Murmur images: one target per deployable, all built from this one file at the repository root.
#
#   docker build --target gateway       -t murmur/gateway:0.1.0 .
#   docker build --target auth          -t murmur/auth:0.1.0 .        (billing, library alike)
#   docker build --target transcription -t murmur/transcription:0.1.0 .
#   docker build --target conversion    -t murmur/conversion:0.1.0 .
#   docker build --target migrate       -t murmur/migrate:0.1.0 .     (the Helm chart's migration Job)
#
# The Helm chart (deploy/helm/murmur) runs <image.repository>/<target>:<tag>, so the target names
# are part of its contract; deploy/helm/test/dockerfile.test.ts checks this file against the
# repository (targets, copied paths, CMD files, runtime dependencies of every workspace package).
#
# Stages: `manifests` (package.json files and the lock) → `build` (every dependency, `tsc -b`)
# → `native` (the transcription service's C helper, built against Debian's pocketsphinx headers)
# → one `deps-<target>` per deployable (`npm install --omit=dev --workspace=<package>`: only that
# package's production closure, so the 700 MB of llama.cpp binaries land in conversion alone)
# → `runtime` (node:24-bookworm-slim, no npm, user 10001) → `base` (what every deployable shares:
# the compiled contracts, the .proto sources the gRPC servers reflect, the kit) → the targets,
# which add their node_modules, their own compiled package and nothing else. They run
# `node <package>/dist/main.js` directly: exec form, no shell, no npm at run time.
#
# The app's side (app/: the admin CLI and demo seeding) is in no image; only its manifest is
# copied, because the lock names every workspace.
#
# The Node major follows package.json `engines.node` (deploy/helm/test/dockerfile.test.ts).

ARG NODE_IMAGE=node:24-bookworm-slim

# ── package manifests: the layer cache key of every npm install below ───────────────────────────
FROM ${NODE_IMAGE} AS manifests
# The npm that wrote package-lock.json, exactly: another npm may write the lock differently (npm
# 10 drops the `libc` fields npm 11 records), and the build refuses a lock it had to change.
ARG NPM_VERSION=11.19.1
RUN npm install --global --no-audit --no-fund npm@${NPM_VERSION}
WORKDIR /app
COPY package.json package-lock.json ./
COPY proto/package.json proto/
COPY services/contract/package.json services/contract/
COPY services/kit/package.json services/kit/
COPY services/auth/package.json services/auth/
COPY services/billing/package.json services/billing/
COPY services/library/package.json services/library/
COPY services/transcription/package.json services/transcription/
COPY services/conversion/package.json services/conversion/
COPY gateway/package.json gateway/
COPY app/package.json app/
COPY launcher/package.json launcher/
COPY sdk/package.json sdk/
COPY ai-sdk/package.json ai-sdk/
COPY bench/package.json bench/
# `npm install` with the committed lock, failing if it had to change it: what `npm ci` promises,
# without npm/cli#4828 (`npm ci` rejects this lock over optional platform packages of other OSes).
# Install scripts stay off, as on the developers' machines: every native module ships prebuilt.
# The production installs below first drop the workspaces' devDependencies (npm installs those of
# the named workspace even with --omit=dev: the gateway's test-only services, llama.cpp included),
# which rewrites the lock, so they prove instead that nothing was installed the lock does not pin.
RUN cp package-lock.json /tmp/package-lock.committed
COPY deploy/docker/lock-subset.js /tmp/lock-subset.js

# ── build: every dependency, then the TypeScript of the deployables (and what they reference) ──
FROM manifests AS build
RUN npm install --no-audit --no-fund --ignore-scripts \
 && cmp package-lock.json /tmp/package-lock.committed
COPY tsconfig.base.json tsconfig.json ./
COPY proto proto
COPY services services
COPY gateway gateway
RUN npx tsc -b gateway services/auth services/billing services/library services/transcription services/conversion

# ── native: live transcription's recognizer (services/transcription/native/ps-live.c), compiled
# against Debian's libpocketsphinx by the same script as on a developer's machine; the headers and
# the compiler stay in this stage, the transcription image takes the binary alone ──────────────
FROM ${NODE_IMAGE} AS native
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      gcc libc6-dev pkg-config libpocketsphinx-dev libsphinxbase-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY scripts/build-native.js scripts/build-native.js
COPY services/transcription/native/ps-live.c services/transcription/native/ps-live.c
RUN node scripts/build-native.js && test -x services/transcription/native/build/ps-live

# ── production dependencies, one closure per deployable ────────────────────────────────────────
FROM manifests AS deps-gateway
RUN npm pkg delete devDependencies --workspaces \
 && npm install --omit=dev --no-audit --no-fund --ignore-scripts --workspace=gateway \
 && node /tmp/lock-subset.js /tmp/package-lock.committed package-lock.json

FROM manifests AS deps-auth
RUN npm pkg delete devDependencies --workspaces \
 && npm install --omit=dev --no-audit --no-fund --ignore-scripts --workspace=services/auth \
 && node /tmp/lock-subset.js /tmp/package-lock.committed package-lock.json

FROM manifests AS deps-billing
RUN npm pkg delete devDependencies --workspaces \
 && npm install --omit=dev --no-audit --no-fund --ignore-scripts --workspace=services/billing \
 && node /tmp/lock-subset.js /tmp/package-lock.committed package-lock.json

FROM manifests AS deps-library
RUN npm pkg delete devDependencies --workspaces \
 && npm install --omit=dev --no-audit --no-fund --ignore-scripts --workspace=services/library \
 && node /tmp/lock-subset.js /tmp/package-lock.committed package-lock.json

FROM manifests AS deps-transcription
# CPU images: whisper.cpp's CUDA and Vulkan builds are not in the lock (decision 0043).
RUN npm pkg delete devDependencies --workspaces \
 && npm install --omit=dev --no-audit --no-fund --ignore-scripts --workspace=services/transcription \
 && node /tmp/lock-subset.js /tmp/package-lock.committed package-lock.json

FROM manifests AS deps-conversion
# CPU images: llama.cpp's CUDA and Vulkan builds are not in the lock (decision 0043).
RUN npm pkg delete devDependencies --workspaces \
 && npm install --omit=dev --no-audit --no-fund --ignore-scripts --workspace=services/conversion \
 && node /tmp/lock-subset.js /tmp/package-lock.committed package-lock.json

FROM manifests AS deps-migrate
RUN npm pkg delete devDependencies --workspaces \
 && npm install --omit=dev --no-audit --no-fund --ignore-scripts --workspace=services/kit \
 && node /tmp/lock-subset.js /tmp/package-lock.committed package-lock.json

# ── runtime base: Node.js without npm, yarn or corepack; an unprivileged numeric user ──────────
FROM ${NODE_IMAGE} AS runtime
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /opt/yarn-* \
      /usr/local/bin/yarn /usr/local/bin/yarnpkg \
 && groupadd --system --gid 10001 murmur \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin murmur
ENV NODE_ENV=production
WORKDIR /app
# Numeric, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
USER 10001:10001

# ── base: what every deployable runs with: the contracts (compiled, and the .proto sources the
# gRPC servers reflect), the rules (@murmur/contract) and the kit ──────────────────────────────────────────────────────────────
FROM runtime AS base
COPY --from=build /app/proto/package.json proto/
COPY --from=build /app/proto/dist proto/dist
COPY --from=build /app/proto/murmur proto/murmur
COPY --from=build /app/proto/google proto/google
COPY --from=build /app/services/contract/package.json services/contract/
COPY --from=build /app/services/contract/dist services/contract/dist
COPY --from=build /app/services/kit/package.json services/kit/
COPY --from=build /app/services/kit/dist services/kit/dist

# ── gateway: REST /api/v1 and MCP /mcp on PORT (8080) ───────────────────────────────────────────
FROM base AS gateway
COPY --from=deps-gateway /app/package.json ./
COPY --from=deps-gateway /app/node_modules node_modules
COPY --from=build /app/gateway/package.json gateway/
COPY --from=build /app/gateway/dist gateway/dist
EXPOSE 8080
CMD ["node", "gateway/dist/main.js"]

# ── auth: gRPC :50051, schema "auth" ────────────────────────────────────────────────────────────
FROM base AS auth
COPY --from=deps-auth /app/package.json ./
COPY --from=deps-auth /app/node_modules node_modules
COPY --from=build /app/services/auth/package.json services/auth/
COPY --from=build /app/services/auth/dist services/auth/dist
COPY --from=build /app/services/auth/migrations services/auth/migrations
EXPOSE 50051
CMD ["node", "services/auth/dist/main.js"]

# ── billing: gRPC :50052, schema "billing" ──────────────────────────────────────────────────────
FROM base AS billing
COPY --from=deps-billing /app/package.json ./
COPY --from=deps-billing /app/node_modules node_modules
COPY --from=build /app/services/billing/package.json services/billing/
COPY --from=build /app/services/billing/dist services/billing/dist
COPY --from=build /app/services/billing/migrations services/billing/migrations
EXPOSE 50052
CMD ["node", "services/billing/dist/main.js"]

# ── library: gRPC :50053, schema "library" ──────────────────────────────────────────────────────
FROM base AS library
COPY --from=deps-library /app/package.json ./
COPY --from=deps-library /app/node_modules node_modules
COPY --from=build /app/services/library/package.json services/library/
COPY --from=build /app/services/library/dist services/library/dist
COPY --from=build /app/services/library/migrations services/library/migrations
EXPOSE 50053
CMD ["node", "services/library/dist/main.js"]

# ── transcription: gRPC :50054, schema "transcription" (jobs + queue); ffmpeg, pocketsphinx ─────
# (pocketsphinx brings libpocketsphinx3, which the live recognizer from `native` links against)
FROM base AS transcription
USER root
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ffmpeg pocketsphinx pocketsphinx-en-us \
 && rm -rf /var/lib/apt/lists/*
USER 10001:10001
COPY --from=native /app/services/transcription/native/build/ps-live services/transcription/native/build/ps-live
COPY --from=deps-transcription /app/package.json ./
COPY --from=deps-transcription /app/node_modules node_modules
COPY --from=build /app/services/transcription/package.json services/transcription/
COPY --from=build /app/services/transcription/dist services/transcription/dist
COPY --from=build /app/services/transcription/migrations services/transcription/migrations
EXPOSE 50054
CMD ["node", "services/transcription/dist/main.js"]

# ── conversion: gRPC :50055; local engine by default, llama.cpp when a GGUF is mounted ─────────
FROM base AS conversion
COPY --from=deps-conversion /app/package.json ./
COPY --from=deps-conversion /app/node_modules node_modules
COPY --from=build /app/services/conversion/package.json services/conversion/
COPY --from=build /app/services/conversion/dist services/conversion/dist
EXPOSE 50055
CMD ["node", "services/conversion/dist/main.js"]

# ── migrate: the chart's pre-install/pre-upgrade Job; every service schema, then exit ──────────
FROM base AS migrate
COPY --from=deps-migrate /app/package.json ./
COPY --from=deps-migrate /app/node_modules node_modules
COPY --from=build /app/services/auth/migrations services/auth/migrations
COPY --from=build /app/services/billing/migrations services/billing/migrations
COPY --from=build /app/services/library/migrations services/library/migrations
COPY --from=build /app/services/transcription/migrations services/transcription/migrations
COPY deploy/docker/migrate.js deploy/docker/migrate.js
CMD ["node", "deploy/docker/migrate.js"]
