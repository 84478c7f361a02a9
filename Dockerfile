# The emulator as a small image: compiled JavaScript, production dependencies, demo fixtures.
#   docker build -t cloud-emulator .
#   docker run --rm -p 8080:8080 cloud-emulator
# Other fixtures: docker run --rm -p 8080:8080 -v ./my-fixtures:/fixtures:ro -e FIXTURES_DIR=/fixtures cloud-emulator
# The base image is an argument so a machine without registry access can use a local Node image.
ARG NODE_IMAGE=node:22-alpine

# Build: every dependency, TypeScript compiled to dist/.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Production dependencies only, resolved from the same lock file.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force

FROM ${NODE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY fixtures ./fixtures
# A writable place for STATE_FILE (e.g. STATE_FILE=/data/state.json with a volume on /data).
# Plain node, because a minimal base image may have no mkdir or chown.
# (No VOLUME instruction: it would leave an anonymous volume behind every run.)
RUN node -e "require('fs').mkdirSync('/data',{recursive:true});require('fs').chownSync('/data',1000,1000)"
USER node
EXPOSE 8080
# Needs no curl or wget: Node's own fetch asks the emulator whether it is up.
HEALTHCHECK --interval=5s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/_emulator/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself, closes gracefully and exits 0.
CMD ["node", "dist/cli/server.js"]
