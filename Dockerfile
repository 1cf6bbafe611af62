# syntax=docker/dockerfile:1
# Both images from one context; each ships only its own compiled tree plus the shared layer
# (common/src), never tests or fixtures (tsconfig.build.json compiles the sources without them):
#   docker build --target operator -t ghcr.io/logpipeline/logpipeline-operator:0.1.0 .
#   docker build --target worker   -t ghcr.io/logpipeline/logpipeline-worker:0.1.0 .
# The chart (charts/logpipeline-operator) defaults to exactly these names and the appVersion tag;
# scripts/dockerfile.test.ts keeps the three in step.

# Node 26 (Active LTS), the major of .node-version that the tests and benchmarks run on
# (docs/runtime.md); scripts/dockerfile.test.ts keeps the three in step.
ARG NODE_IMAGE=node:26-bookworm-slim
# Distroless: no shell, no package manager, glibc (lz4-napi ships a glibc prebuilt), UID 65532.
# Distroless publishes Node 26 on Debian 13 only; the addons' glibc prebuilts need an older glibc
# than either base has, so building on bookworm and running on Debian 13 is safe.
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs26-debian13:nonroot

# --- build: compile the TypeScript (dev dependencies live only here) ---
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No production dependency has an install script; skipping them keeps dev-only downloads (chdb's
# ClickHouse library, swc's binary check) out of the build. tsc needs none of them, nor any
# platform binary (--omit=optional). `npm install` honours the lockfile; `npm ci` refuses it
# because the lock lacks chdb's other-platform optional packages (see scripts/setup.sh).
RUN npm install --omit=optional --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY common/src common/src
COPY operator/src operator/src
COPY operator/cli operator/cli
COPY consumer/src consumer/src
RUN npx tsc -p tsconfig.build.json

# --- prod-deps: production node_modules only (chdb and every other devDependency stay out) ---
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# --- runtime: what both images share ---
FROM ${RUNTIME_IMAGE} AS runtime
ARG VERSION=0.1.0
WORKDIR /app
ENV NODE_ENV=production
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /src/package.json ./package.json
# The contract both sides obey (worker config, column types, integrity forms, logging); the operator
# and the worker never import each other's code, only this layer (scripts/image-trees.test.ts).
COPY --from=build /src/dist/common/src ./dist/common/src
USER 65532:65532
LABEL org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.vendor="logpipeline"

# --- worker: Kafka -> parse -> ClickHouse ---
FROM runtime AS worker
LABEL org.opencontainers.image.title="logpipeline-worker" \
      org.opencontainers.image.ref.name="ghcr.io/logpipeline/logpipeline-worker" \
      org.opencontainers.image.description="logpipeline consumer worker: Kafka to ClickHouse, exactly once"
COPY --from=build /src/dist/consumer/src ./dist/consumer/src
EXPOSE 8080
# Exec form with the script in ENTRYPOINT: the operator passes `--config <path>` as container
# args, which Kubernetes appends to the entrypoint (args would replace a CMD instead).
# The V8 flags are the worker's runtime settings (common/src/worker-runtime.ts WORKER_NODE_ARGS: fewer
# full GCs, a larger inlining budget; docs/operations.md "Worker runtime settings"); Node refuses
# them in NODE_OPTIONS, which stays free for a LogPipeline's own spec.workers.env.
ENTRYPOINT ["/nodejs/bin/node", "--initial-old-space-size=128", "--max-inlined-bytecode-size-cumulative=3000", "dist/consumer/src/main.js"]

# --- operator (last, so a plain `docker build .` gives the operator) ---
FROM runtime AS operator
LABEL org.opencontainers.image.title="logpipeline-operator" \
      org.opencontainers.image.ref.name="ghcr.io/logpipeline/logpipeline-operator" \
      org.opencontainers.image.description="logpipeline operator: reconciles LogPipeline resources"
# The `logpipeline` CLI (operator/cli) is not shipped: it also loads the worker's parsers, and an
# auditor runs `verify` with their own credentials, not from the operator's pod. It is the
# package's bin (docs/operations.md).
COPY --from=build /src/dist/operator/src ./dist/operator/src
EXPOSE 8080
# Memory at fleet scale (scripts/operator-runtime.ts, docs/operations.md "Operator memory"): small
# V8 semi-spaces, a bounded old-generation growth and two malloc arenas keep RSS near the live
# heap; NODE_OPTIONS can add more.
ENV MALLOC_ARENA_MAX=2
ENTRYPOINT ["/nodejs/bin/node", "--max-semi-space-size=2", "--heap-growing-percent=50", "dist/operator/src/main.js"]
