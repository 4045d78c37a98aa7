# The operator image: ghcr.io/customapp/customapp-operator:v0.1.0 (infra/operator-deployment.ts DEFAULT_OPERATOR_IMAGE).
#   docker build -t ghcr.io/customapp/customapp-operator:v0.1.0 .
# The Deployment in dist/ runs it with `--leader-elect --metrics-bind-address=:8443 --health-probe-bind-address=:8081`,
# as uid/gid 65532 with a read-only root filesystem: the entrypoint takes those flags as they are, and nothing is
# written at run time (the TypeScript is compiled here, so no tsx cache is needed).

# Both stages take their base as a build argument; the defaults are the public Node.js images. `npm run cluster`
# builds this file with buildah on a base made here from Debian packages and this machine's Node.js
# (envtest/node/build-images.sh), because no registry is reachable there.
ARG NODE_IMAGE=node:20-bookworm
ARG NODE_SLIM_IMAGE=node:20-bookworm-slim

# ---- build: install everything, bundle operator/main.ts into one CommonJS file and operator/start.ts (which starts it
# from V8's code cache) into another, then keep production dependencies only.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY api/ api/
COPY infra/ infra/
COPY imports/ imports/
COPY operator/ operator/
COPY x509/ x509/
COPY dist/ dist/
# Every npm package is bundled: a start reads one file instead of resolving and compiling hundreds (rxjs alone is
# about 400), 0.19 instead of 0.25 CPU-s to load; of @kubernetes/client-node only the parts the operator uses are
# loaded (KubeConfig and its auth, not the generated API clients: about 11 MiB of heap instead of 32). CommonJS, so
# that start.cjs can hand V8 the bundle's code cache (operator/code-cache.ts says why); `import.meta.dirname` is then
# `__dirname`. The same flags as the benchmark's runner (BUNDLE_FLAGS in bench/operator-process.ts). The emulator is
# left out: in a cluster the in-cluster configuration is always found, so the embedded default never runs there.
RUN npx esbuild operator/main.ts --bundle --platform=node --format=cjs --target=node20 \
      --define:import.meta.dirname=__dirname \
      --external:../emulator/index.js \
      --outfile=/out/operator.cjs \
 && npx esbuild operator/start.ts --bundle --platform=node --format=cjs --target=node20 --outfile=/out/start.cjs \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/.cache

# ---- runtime: slim Node, non-root, only the bundle, production node_modules and dist/ (the manifests).
FROM ${NODE_SLIM_IMAGE}
ENV NODE_ENV=production
# Runtime settings for a small, long-running process (measured by the benchmark, whose runner starts the same way:
# RUNTIME_FLAGS and RUNTIME_ENV in bench/operator-process.ts).
# - malloc is jemalloc (Debian's libjemalloc2) with 2 arenas: glibc's kept 0 to 30 MiB from run to run of what V8's
#   optimizing compiler had freed (RSS after sync at 1k CustomApps 112 to 138 MiB, with jemalloc 108 to 113), and should
#   the preload be missing, glibc keeps 2 arenas instead of 8 per core.
# - jemalloc's own thread returns freed pages to the kernel after 1 s instead of 10 s, whether or not the process
#   allocates meanwhile: an idle operator otherwise kept up to 50 MiB of a burst's freed pages (RSS after a restart at
#   1k 146 to 164 MiB, with it 112 to 113, at the same CPU).
# - V8's young generation stays at 2 MiB semi-spaces instead of growing to 16 MiB.
# - V8 optimizes a function with TurboFan once it has used 256 KiB of interrupt budget instead of 66 KiB: the burst of
#   lists and reconciles of a restart or a cold start then compiles less, on V8's worker threads, of code it runs only
#   a few hundred times (a restart at 1k CustomApps 0.82 → 0.61 CPU-s), while a reconcile that runs all the time is
#   optimized as before (a higher budget cost it a quarter more CPU).
# The local base of `npm run cluster` has the library already; a public base gets it from Debian.
RUN lib="$(ls /usr/lib/*-linux-gnu/libjemalloc.so.2 2>/dev/null | head -n 1)" \
 && if [ -z "${lib}" ]; then \
      apt-get update && apt-get install -y --no-install-recommends libjemalloc2 && rm -rf /var/lib/apt/lists/* \
      && lib="$(ls /usr/lib/*-linux-gnu/libjemalloc.so.2 | head -n 1)"; \
    fi \
 && ln -s "${lib}" /usr/local/lib/libjemalloc.so.2
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2
ENV MALLOC_CONF=narenas:2,background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0
ENV MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build /src/node_modules/ node_modules/
COPY --from=build /src/package.json ./
COPY --from=build /out/operator.cjs /out/start.cjs operator/
COPY --from=build /src/dist/ dist/
# V8's code cache of the bundle, made by this stage's Node with the entrypoint's flags (V8 refuses a cache made by
# another Node or under other flags): a start then compiles almost nothing of the 4 MB bundle, 0.20 instead of 0.29
# CPU-s to load it. The process that writes it exits once the modules are loaded, before the operator's first wait:
# it never reaches a cluster.
RUN CODE_CACHE=write node --max-semi-space-size=2 --interrupt-budget=262144 /app/operator/start.cjs /app/operator/operator.cjs
USER 65532:65532
EXPOSE 8443 8081
ENTRYPOINT ["node", "--max-semi-space-size=2", "--interrupt-budget=262144", "/app/operator/start.cjs", "/app/operator/operator.cjs"]
