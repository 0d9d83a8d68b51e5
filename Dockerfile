# One image for the worker and the API (docker-compose.yml picks the command).
# TypeScript runs through tsx (a runtime dependency), so there is no build step.
FROM node:20.20.2-slim

# git: pieces may ask for `git status`; the Bash tool runs in the job's workspace.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY . .

ENV NODE_ENV=production \
    MAESTRO_HOME=/data/maestro
RUN mkdir -p /data/maestro && chown -R node:node /data/maestro
USER node

EXPOSE 8787
CMD ["node", "bin/maestro.js", "api"]
