# Plant Store container image.
#
#   docker build -t plant-store .
#   docker run -p 3000:3000 -v plant-data:/data \
#     -v "$PWD/secrets/api_tokens:/run/secrets/api_tokens:ro" -e API_TOKENS_FILE=/run/secrets/api_tokens \
#     plant-store
#
# Node.js 24, the current LTS line (the service supports 22 and 24). better-sqlite3
# ships a Node-API build inside its package, which loads on every supported line;
# package.json's allowScripts keeps npm from compiling it again (npm 11), so the
# build needs no compiler. Keep both tags on one line.

FROM node:24-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund \
 && node -e "require('better-sqlite3')(':memory:').prepare('select 1').get()"
COPY . .
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# Runtime stage: production dependencies, compiled JavaScript, package.json.
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_URL=sqlite:/data/plants.db
WORKDIR /app
# Owned by root: the service user can read the code but not change it.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 3000
# The slim image has no curl or wget: node's own fetch asks /health.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself (graceful close in src/server.ts).
# The young generation held to the size Node.js 22 gives it: on a host with memory to
# spare Node.js 24 lets it grow several times larger, and requests waiting out a stalled
# store make it grow, for no CPU that a create saves. npm start, the compose file and the
# tests' servers start with the same flags (test/start-flags.test.ts).
CMD ["node", "--max-semi-space-size=16", "dist/src/server.js"]
