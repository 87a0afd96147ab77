# syntax=docker/dockerfile:1
# The self-hosted service: `access-connectors service <connector>` (docs/service.md).
#
#   npm run image        # docker build, tagged access-connectors:latest and access-connectors:<version>
#   docker run --env-file blackline.env -v ac-state:/var/lib/access-connectors access-connectors blackline
#
# No Docker engine runs where this project is tested: scripts/container-build.mjs carries out these
# same steps (this file's COPY and RUN lines, read from here) into a directory, and
# test/service/container.test.ts starts the result. Keep every RUN in the build stage and every
# path below /build relative, so that script can follow them.

ARG NODE_IMAGE=node:22-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /build
# Dependencies first, from the lockfile only, so this layer is reused while only the code changes.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.mjs scripts/zodLocales.mjs scripts/
COPY bin bin
COPY lib lib
RUN npm run build
# Production dependencies only, and the state directory the final stage takes with its owner.
RUN npm prune --omit=dev --ignore-scripts --no-audit --no-fund && mkdir -p state

FROM ${NODE_IMAGE}
# The package's version; `npm run image` (and scripts/container-build.mjs) pass it from package.json.
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="access-connectors" \
      org.opencontainers.image.description="Self-hosted connector service for BlackLine and Valimail" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
# The monitoring endpoint (/livez, /readyz, /metrics, /status; docs/service.md) on every
# interface of the container, so the orchestrator's probes and Prometheus reach it.
ENV NODE_ENV=production \
    CONNECTOR_STATE_DIR=/var/lib/access-connectors \
    CONNECTOR_HTTP_HOST=0.0.0.0 \
    CONNECTOR_HTTP_PORT=9090
WORKDIR /app
COPY --from=build /build/package.json package.json
COPY --from=build /build/node_modules node_modules
COPY --from=build /build/dist dist
COPY --from=build /build/bin bin
COPY --from=build --chown=node:node /build/state /var/lib/access-connectors
# The node image's unprivileged user; the state directory (replies, labels, health) is its own.
USER node
VOLUME ["/var/lib/access-connectors"]
EXPOSE 9090
# Healthy while GET /livez answers 200 (the process's event loop turns). With CONNECTOR_HTTP_PORT
# set empty (no listener) or 0 (any port), healthy while the service keeps rewriting its health file instead
# (every 5 s; stale after 60 s), as images before the endpoint were.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const e=process.env,p=e.CONNECTOR_HTTP_PORT,h=e.CONNECTOR_HTTP_HOST;if(p&&p!=='0'){const a=!h||h==='0.0.0.0'||h==='::'?'127.0.0.1':h.includes(':')?'['+h+']':h;fetch('http://'+a+':'+p+'/livez',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))}else{const f=e.CONNECTOR_HEALTH_FILE||e.CONNECTOR_STATE_DIR+'/health.json';const j=JSON.parse(require('fs').readFileSync(f,'utf8'));process.exit(Date.parse(j.staleAfter)>Date.now()?0:1)}"]
# The connector is the argument (docker run IMAGE blackline) or CONNECTOR_NAME. SIGTERM stops it
# cleanly within 10 s (exit 0); node runs as PID 1 (env execs it) and handles the signal itself.
# The executable itself, not `node bin/...`: its #! line carries the memory settings
# (glibc's MALLOC_ARENA_MAX and MALLOC_MMAP_THRESHOLD_, V8's young generation and heap growth),
# which `node FILE` skips.
ENTRYPOINT ["/app/bin/access-connectors.js", "service"]
CMD []
