# syntax=docker/dockerfile:1
# conductor-loop: the `conductor` server (REST + SSE + web dashboard) and the `run-agent` CLI.
#   docker build -t conductor-loop .
#   podman build --format docker -t conductor-loop .   (--format docker keeps the HEALTHCHECK)
#   docker build --build-arg AGENT_CLIS="@anthropic-ai/claude-code @openai/codex @google/gemini-cli" -t conductor-loop .
# Checked offline by `npm run lint:docker` (scripts/lint-dockerfile.js). See docs/deployment.md.

# --- build: compile the server, the CLI and the dashboard ---------------------------------------
FROM node:24-bookworm-slim AS build
# python3, make and g++ build the fs-ext flock binding.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY frontend/package.json frontend/package-lock.json frontend/
RUN npm ci --prefix frontend --no-audit --no-fund
COPY . .
RUN npm run build

# --- prod-deps: production dependencies only (fs-ext compiled here, so the runtime needs no compiler)
FROM node:24-bookworm-slim AS prod-deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund

# --- runtime ------------------------------------------------------------------------------------
FROM node:24-bookworm-slim AS runtime
# git: worktree tasks (isolation "worktree", `run-agent task --worktree`) and merges run it.
# tini: PID 1 that forwards signals to the server and reaps the process trees of finished agents.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git tini ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# Agent CLIs installed globally when set, e.g. "@anthropic-ai/claude-code @openai/codex @google/gemini-cli".
ARG AGENT_CLIS=""
RUN if [ -n "$AGENT_CLIS" ]; then \
      npm install -g --no-audit --no-fund $AGENT_CLIS && npm cache clean --force; \
    fi
# The container must listen on all its interfaces to be reachable through a published port; the
# server then needs the host names clients use (CONDUCTOR_ALLOWED_HOSTS: localhost and 127.0.0.1 on
# any published port; add yours with -e CONDUCTOR_ALLOWED_HOSTS=…) and a key: -e CONDUCTOR_API_KEY=…,
# else it generates one and prints the dashboard link with it. See docs/deployment.md.
ENV NODE_ENV=production \
    CONDUCTOR_HOST=0.0.0.0 \
    CONDUCTOR_ALLOWED_HOSTS=localhost,127.0.0.1 \
    CONDUCTOR_ROOT=/data/runs \
    CONDUCTOR_PORT=14355 \
    PATH=/app/bin:$PATH
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/bin ./bin
COPY --from=build /src/dist/apps ./dist/apps
COPY --from=build /src/frontend/dist ./frontend/dist
RUN mkdir -p /data/runs /etc/conductor \
 && chown -R node:node /data
# The image's unprivileged user (uid 1000) of the node base image.
USER node
VOLUME ["/data/runs"]
EXPOSE 14355
# Kept by docker; podman/buildah keep it only with `--format docker` (OCI images have no HEALTHCHECK);
# otherwise give it at run time: `podman run --health-cmd …` (docs/deployment.md).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.CONDUCTOR_PORT || 14355) + '/api/v1/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["conductor"]
