# One image for the worker and the API (docker-compose.yml picks the command).
# TypeScript runs through tsx (a runtime dependency), so there is no build step.
FROM node:20.20.2-slim

# From Debian: bubblewrap (every process a tool starts runs in its sandbox), slirp4netns (network for
# a sandbox a piece grants it to), ripgrep (Grep), git (pieces may ask for `git status`).
# Debian's bwrap is not setuid: it needs unprivileged user namespaces, which docker-compose.yml
# allows for the worker with infra/docker/worker-seccomp.json (see docs/operations.md).
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap slirp4netns ripgrep git ca-certificates \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY . .

ENV NODE_ENV=production \
    MAESTRO_HOME=/data/maestro
# The code stays root-owned (read-only to the worker); only MAESTRO_HOME is writable.
RUN mkdir -p /data/maestro && chown -R node:node /data/maestro
# Non-root (uid 1000): the worker and the sandboxes it starts never run as root.
USER node

EXPOSE 8787
CMD ["node", "bin/maestro.js", "api"]
