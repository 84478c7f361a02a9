# The emulator as a small image: compiled JavaScript, production dependencies, demo fixtures,
# and of the Node base image only node itself and the libraries it loads (FROM scratch).
#   docker build -t cloud-emulator .
#   docker run --rm -p 8080:8080 cloud-emulator
# Other fixtures: docker run --rm -p 8080:8080 -v ./my-fixtures:/fixtures:ro -e FIXTURES_DIR=/fixtures cloud-emulator
# There is no shell in the image: docker exec <container> node -e '...' (docs/running.md).
# The base image is an argument so a machine without registry access can use a local Node image;
# a base whose node is stripped gives a smaller image.
ARG NODE_IMAGE=node:22-alpine

# Build: every dependency, TypeScript compiled to dist/ (ES modules only), without the type
# declarations and source maps, which nothing in the image reads.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json tsconfig.cjs.json ./
COPY scripts/build.mjs scripts/image-files.mjs ./scripts/
COPY bench/help.mjs ./bench/
COPY src ./src
RUN node scripts/build.mjs --esm-only && node scripts/image-files.mjs prune dist

# Production dependencies only, resolved from the same lock file, less what Node never loads
# (declarations, source maps, TypeScript, Markdown, packages' tests, docs and examples).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/image-files.mjs ./scripts/
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force \
 && node scripts/image-files.mjs prune node_modules

# The running Node alone: its binary, the shared libraries it loads, the CA bundle, the users
# root and node, /tmp, /data. No npm, npx, corepack, yarn, C headers, package manager or shell.
FROM ${NODE_IMAGE} AS runtime
COPY scripts/image-files.mjs /tmp/
RUN node /tmp/image-files.mjs rootfs /rootfs

FROM scratch
# The package's version; the container test passes package.json's.
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="cloud-emulator" \
      org.opencontainers.image.description="Stateful emulator of a cloud load-testing service: provisioning, repository, annotations, alerts, and a control API for tests" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.vendor="cloud-emulator contributors"
COPY --from=runtime /rootfs/ /
ENV PATH=/usr/local/bin \
    NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json LICENSE ./
COPY fixtures ./fixtures
# A writable place for STATE_FILE (e.g. STATE_FILE=/data/state.json with a volume on /data),
# owned by node and by group 0 with the same rights: a platform that runs the image as an
# arbitrary user id in group 0 (OpenShift) can write there too. /tmp for everyone, as usual.
# Exec form with node, as there is no shell; it also proves that node runs in this file system.
# (No VOLUME instruction: it would leave an anonymous volume behind every run.)
RUN ["node", "-e", "const fs=require('fs');fs.chownSync('/data',1000,0);fs.chmodSync('/data',0o775);fs.chownSync('/home/node',1000,1000);fs.chmodSync('/tmp',0o1777)"]
USER node
EXPOSE 8080
# Needs no curl or wget: Node's own fetch asks the emulator whether it is up. While starting,
# it asks every 200 ms (an engine that knows --start-interval: Docker 25 and later), so the
# container is healthy within a moment of being ready; after that every 30 s.
HEALTHCHECK --interval=30s --timeout=3s --start-period=30s --start-interval=200ms --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/_emulator/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself, closes gracefully and exits 0.
CMD ["node", "dist/cli/server.js"]
