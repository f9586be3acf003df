# Plant Store container image.
#
#   docker build -t plant-store .
#   docker run -p 3000:3000 -v plant-data:/data \
#     -v "$PWD/secrets/api_tokens:/run/secrets/api_tokens:ro" -e API_TOKENS_FILE=/run/secrets/api_tokens \
#     plant-store
#
# Both stages must use the same Node.js major: better-sqlite3 is a native module,
# compiled in the build stage for that Node ABI. Change the two tags together.

# Build stage: the full Debian image has python3, make and g++ for node-gyp.
FROM node:24-bookworm AS build
WORKDIR /app
# A no-op on the official image; installs the toolchain on a base that lacks it.
RUN if ! command -v python3 >/dev/null || ! command -v make >/dev/null || ! command -v g++ >/dev/null; then \
      apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*; \
    fi
COPY package.json package-lock.json ./
# package.json's allowScripts lets better-sqlite3's install script run (npm 11);
# it compiles against this image's Node rather than fetching a prebuilt binary.
RUN npm_config_build_from_source=better-sqlite3 npm ci --no-audit --no-fund \
 && node -e "require('better-sqlite3')(':memory:').close()"
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
CMD ["node", "dist/src/server.js"]
