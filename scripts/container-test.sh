#!/usr/bin/env bash
# The container test (npm run test:container): builds the image and prints its size, starts
# it, waits until it is healthy, smoke-tests all three interfaces and the control API from
# outside, checks it runs as non-root and holds no shell or npm, that the CLI in the image
# works, that with a terminal it logs readably, that SIGTERM stops it cleanly and fast
# and flushes STATE_FILE (also as an arbitrary user id in group 0), then brings
# docker-compose.yml up and down. Last, it packs the package, installs the tarball into an
# empty project and runs a vitest file there that starts the image with the Testcontainers
# module, drives it with the typed client and asserts on the journal: once loading the
# package with import, once with require.
#
# Engine: docker when `docker info` answers, else podman. Settings (environment):
#   CONTAINER_ENGINE  force docker or podman
#   NODE_IMAGE        base image build argument (default: the Dockerfile's official image;
#                     with podman and no registry, the local image a setup script prepares)
#   PODMAN_SETUP      script that installs podman and prints a local base image tag
#                     (default: ../shared/container/setup-podman.sh beside the repository)
#   KEEP_IMAGE=1      keep the test image afterwards
# The package test installs the tarball's dependencies from the npm registry (the npm cache
# first) and takes vitest and testcontainers from this repository's node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'container-test: %s\n' "$*" >&2; }
die() {
  log "FAILED: $*"
  exit 1
}
ms() { date +%s%3N; }
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{process.stdout.write(String(s.address().port));s.close()})"; }

# --- engine -------------------------------------------------------------------------------
PODMAN_SETUP=${PODMAN_SETUP:-../shared/container/setup-podman.sh}
ENGINE=${CONTAINER_ENGINE:-}
if [[ -z $ENGINE ]]; then
  if command -v docker >/dev/null 2>&1 && timeout 20 docker info >/dev/null 2>&1; then
    ENGINE=docker
  else
    ENGINE=podman
  fi
fi
if [[ $ENGINE == podman && -z ${NODE_IMAGE:-} && -f $PODMAN_SETUP ]]; then
  # No registry to pull the official base image from: the setup script (idempotent)
  # installs podman if needed and prints the tag of a local Node base image.
  # --socket: also Podman's Docker-compatible API, which testcontainers speaks.
  log "preparing podman with $PODMAN_SETUP"
  NODE_IMAGE=$(bash "$PODMAN_SETUP" --socket | tail -n 1)
fi
command -v "$ENGINE" >/dev/null 2>&1 || die "no container engine: neither a docker engine nor podman is available"

if [[ $ENGINE == docker ]]; then
  if docker compose version >/dev/null 2>&1; then COMPOSE=(docker compose); else COMPOSE=(docker-compose); fi
  BUILD_FORMAT=()
  TAG=cloud-emulator:container-test-$$
else
  COMPOSE=(podman-compose)
  # Podman's default OCI image format has no HEALTHCHECK; the docker format keeps it.
  BUILD_FORMAT=(--format docker)
  TAG=localhost/cloud-emulator:container-test-$$
fi
NAME=cloud-emulator-test-$$
PROJECT=cetest$$
WORK=$(mktemp -d)
COMPOSE_ENV=()
PODMAN_SERVICE_PID=

cleanup() {
  set +e
  for c in "$NAME" "$NAME-state" "$NAME-state2" "$NAME-uid" "$NAME-tty"; do "$ENGINE" rm -f -v "$c" >/dev/null 2>&1; done
  [[ -z $PODMAN_SERVICE_PID ]] || kill "$PODMAN_SERVICE_PID" 2>/dev/null
  if [[ ${#COMPOSE_ENV[@]} -gt 0 ]]; then env "${COMPOSE_ENV[@]}" "${COMPOSE[@]}" -p "$PROJECT" -f docker-compose.yml down >/dev/null 2>&1; fi
  [[ ${KEEP_IMAGE:-} == 1 ]] || "$ENGINE" rmi -f "$TAG" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

http_status() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1" || true; }

wait_http() { # url timeout_s [container: give up at once if it stops]
  local deadline=$(($(date +%s) + $2))
  until [[ $(http_status "$1") == 200 ]]; do
    (($(date +%s) < deadline)) || return 1
    if [[ -n ${3:-} && $("$ENGINE" inspect --format '{{.State.Running}}' "$3" 2>/dev/null) != true ]]; then
      "$ENGINE" logs "$3" 2>&1 | tail -n 20 >&2
      log "container $3 stopped"
      return 1
    fi
    sleep 0.1
  done
}

wait_healthy() { # container timeout_s
  local deadline=$(($(date +%s) + $2)) status
  while :; do
    if [[ $ENGINE == podman ]]; then
      # Podman schedules health checks with systemd timers, absent in a plain container
      # host; run the image's HEALTHCHECK on demand instead (the same command).
      podman healthcheck run "$1" >/dev/null 2>&1 || true
    fi
    status=$("$ENGINE" inspect --format '{{if .State.Health}}{{.State.Health.Status}}{{end}}' "$1" 2>/dev/null || true)
    [[ $status == healthy ]] && return 0
    (($(date +%s) < deadline)) || {
      log "health status: ${status:-none}"
      return 1
    }
    sleep 0.2
  done
}

# --- build --------------------------------------------------------------------------------
log "engine: $ENGINE; base image: ${NODE_IMAGE:-the Dockerfile default}"
BUILD_ARGS=()
[[ -n ${NODE_IMAGE:-} ]] && BUILD_ARGS=(--build-arg "NODE_IMAGE=$NODE_IMAGE")
VERSION=$(node -p 'require("./package.json").version')
BUILD_ARGS+=(--build-arg "VERSION=$VERSION")
grep -q -- '--start-interval=200ms' Dockerfile || die "the Dockerfile's HEALTHCHECK has no --start-interval"
DOCKERFILE=Dockerfile
if [[ $ENGINE == podman ]] && ! podman build --help 2>/dev/null | grep -q -- 'start-interval'; then
  # Podman 4 refuses the flag (Docker 25 and later know it): build a copy without it.
  sed 's/ --start-interval=[^ ]*//' Dockerfile >"$WORK/Dockerfile"
  DOCKERFILE=$WORK/Dockerfile
  log "podman does not know HEALTHCHECK --start-interval: building without it"
fi
t=$(ms)
timeout 900 "$ENGINE" build "${BUILD_FORMAT[@]}" "${BUILD_ARGS[@]}" -f "$DOCKERFILE" -t "$TAG" . >"$WORK/build.log" 2>&1 || {
  tail -n 40 "$WORK/build.log" >&2
  die "image build failed"
}
BUILD_MS=$(($(ms) - t))
SIZE=$("$ENGINE" image inspect --format '{{.Size}}' "$TAG")
# Decimal megabytes of the uncompressed image, as `docker images` and `podman images` show it.
SIZE_MB=$(node -p "($SIZE / 1e6).toFixed(1)")
log "built $TAG in $((BUILD_MS / 1000)) s"
log "image size: $SIZE_MB MB ($ENGINE image inspect, uncompressed; node bench/image.mjs lists the layers)"
[[ $("$ENGINE" image inspect --format '{{.Config.User}}' "$TAG") == node ]] || die "the image does not run as the user node"
label() { "$ENGINE" image inspect --format "{{index .Config.Labels \"org.opencontainers.image.$1\"}}" "$TAG"; }
[[ $(label version) == "$VERSION" ]] || die "label org.opencontainers.image.version is '$(label version)', expected $VERSION"
[[ $(label licenses) == MIT && $(label title) == cloud-emulator ]] || die "OCI labels licenses/title missing"
log "OCI labels: title, version $VERSION, licenses MIT"

# --- run, healthy, smoke ------------------------------------------------------------------
PORT=$(free_port)
URL=http://127.0.0.1:$PORT
t=$(ms)
"$ENGINE" run -d --name "$NAME" -p "127.0.0.1:$PORT:8080" "$TAG" >/dev/null 2>>"$WORK/engine.log"
wait_http "$URL/_emulator/health" 60 "$NAME" || {
  die "the emulator did not answer $URL/_emulator/health within 60 s"
}
READY_MS=$(($(ms) - t))
wait_healthy "$NAME" 60 || die "the container did not become healthy within 60 s"
HEALTHY_MS=$(($(ms) - t))
log "answering after $READY_MS ms, healthy after $HEALTHY_MS ms ($((HEALTHY_MS - READY_MS)) ms after answering)"
if [[ $ENGINE == docker ]]; then
  # Podman is excluded: without systemd it runs no health checks itself (wait_healthy runs them).
  ((HEALTHY_MS - READY_MS < 2000)) || die "healthy $((HEALTHY_MS - READY_MS)) ms after answering; --start-interval should make it well under a second"
fi

node scripts/smoke.mjs "$URL" || {
  "$ENGINE" logs "$NAME" 2>&1 | tail -n 30 >&2
  die "smoke test"
}
# The API explorer's script, a file of a production dependency that the image keeps.
[[ $(http_status "$URL/_emulator/docs/static/swagger-ui-bundle.js") == 200 ]] || die "the API explorer's swagger-ui-bundle.js is not served"

uid=$("$ENGINE" exec "$NAME" node -e 'process.stdout.write(String(process.getuid()))')
[[ $uid != 0 ]] || die "the emulator runs as root"
log "runs as uid $uid (non-root)"
# The image holds the running Node only: no shell, no npm (see docs/running.md).
"$ENGINE" exec "$NAME" node -e '
  const fs = require("fs");
  const there = ["/bin/sh", "/bin/busybox", "/usr/local/bin/npm", "/usr/bin/npm", "/usr/local/lib/node_modules", "/usr/lib/node_modules"].filter((p) => fs.existsSync(p));
  if (there.length) { console.error(there.join(" ")); process.exit(1); }' || die "the image holds a shell or npm"
log "image contents: no shell, no npm"

"$ENGINE" logs "$NAME" >"$WORK/run.log" 2>/dev/null
grep -q '"msg":"request"' "$WORK/run.log" || die "no per-request JSON log line"
if grep '"msg":"request"' "$WORK/run.log" | grep -v '"reqId"' >/dev/null; then die "a request log line carries no reqId"; fi

# --- the command line inside the image ----------------------------------------------------
"$ENGINE" run --rm "$TAG" node dist/cli/cli.js --help >"$WORK/help.txt" 2>>"$WORK/engine.log"
grep -q -- '--time-scale' "$WORK/help.txt" || die "cloud-emulator --help does not list --time-scale"
set +e
"$ENGINE" run --rm "$TAG" node dist/cli/cli.js --port nope >/dev/null 2>"$WORK/cli.err"
code=$?
set -e
[[ $code == 2 ]] || die "a bad --port exited $code, expected 2"
grep -q -- '--port="nope"' "$WORK/cli.err" || die "a bad --port gave no clear message: $(cat "$WORK/cli.err")"
"$ENGINE" run --rm "$TAG" node dist/cli/cli.js check /app/fixtures >"$WORK/check.txt" 2>>"$WORK/engine.log"
grep -q '^OK' "$WORK/check.txt" || die "cloud-emulator check of the baked-in fixtures failed"
log "CLI: --help, exit 2 on a bad value, check: ok"

# --- a terminal: readable logs (pino-pretty, loaded in a worker thread) ----------------------
PORT4=$(free_port)
"$ENGINE" run -d -t --name "$NAME-tty" -p "127.0.0.1:$PORT4:8080" "$TAG" >/dev/null 2>>"$WORK/engine.log"
wait_http "http://127.0.0.1:$PORT4/_emulator/health" 60 "$NAME-tty" || die "the container with a terminal did not answer"
sleep 0.5
"$ENGINE" logs "$NAME-tty" >"$WORK/tty.log" 2>&1
sed 's/\x1b\[[0-9;]*m//g' "$WORK/tty.log" | grep -q 'INFO.*cloud-emulator ready' || {
  tail -n 20 "$WORK/tty.log" >&2
  die "with a terminal, the log is not printed readably (pino-pretty)"
}
if grep -q '"msg":' "$WORK/tty.log"; then die "with a terminal, the log still has JSON lines"; fi
"$ENGINE" rm -f -v "$NAME-tty" >/dev/null
log "with a terminal: readable log lines (pino-pretty)"

# --- SIGTERM ------------------------------------------------------------------------------
t=$(ms)
"$ENGINE" kill --signal TERM "$NAME" >/dev/null
code=$("$ENGINE" wait "$NAME" | tail -n 1)
STOP_MS=$(($(ms) - t))
[[ $code == 0 ]] || die "exit code after SIGTERM: $code, expected 0"
"$ENGINE" logs "$NAME" >"$WORK/run.log" 2>/dev/null
grep -q '"signal":"SIGTERM"' "$WORK/run.log" || die "no shutdown log line for SIGTERM"
CLOSE_MS=$(node -e '
  const lines = require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean).map((l) => { try { return JSON.parse(l) } catch { return {} } });
  const closing = lines.find((l) => l.msg === "closing"), closed = lines.find((l) => l.msg === "closed");
  process.stdout.write(closing && closed ? String(closed.time - closing.time) : "?");' <"$WORK/run.log")
((STOP_MS < 3000)) || die "stopping took $STOP_MS ms after SIGTERM"
log "SIGTERM: exit code 0, $STOP_MS ms from the signal to the engine seeing the exit (close took $CLOSE_MS ms inside)"

# --- STATE_FILE is flushed on SIGTERM -----------------------------------------------------
mkdir -p "$WORK/data"
chmod 777 "$WORK/data"
PORT2=$(free_port)
state_run() { # name
  "$ENGINE" run -d --name "$1" -p "127.0.0.1:$PORT2:8080" -v "$WORK/data:/data" \
    -e STATE_FILE=/data/state.json -e STATE_FLUSH_INTERVAL_MS=0 "$TAG" >/dev/null 2>>"$WORK/engine.log"
  wait_http "http://127.0.0.1:$PORT2/_emulator/health" 60 "$1" || die "the STATE_FILE container did not start"
}
state_run "$NAME-state"
created=$(curl -s --max-time 5 -X POST -H 'X-Auth-Token: demo-token' -H 'Content-Type: application/json' \
  -d '{"title":"persisted by SIGTERM","text":"container test","start":1790000000000}' \
  "http://127.0.0.1:$PORT2/concerto/mpulse/api/annotations/v1")
id=$(node -e 'process.stdout.write(String(JSON.parse(process.argv[1]).id ?? ""))' "$created")
[[ -n $id ]] || die "could not create an annotation: $created"
"$ENGINE" kill --signal TERM "$NAME-state" >/dev/null
code=$("$ENGINE" wait "$NAME-state" | tail -n 1)
[[ $code == 0 ]] || die "exit code after SIGTERM with STATE_FILE: $code"
grep -q 'persisted by SIGTERM' "$WORK/data/state.json" 2>/dev/null || die "STATE_FILE was not flushed on SIGTERM"
state_run "$NAME-state2"
status=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H 'X-Auth-Token: demo-token' "http://127.0.0.1:$PORT2/concerto/mpulse/api/annotations/v1/$id")
[[ $status == 200 ]] || die "the annotation did not survive a restart with STATE_FILE (GET -> $status)"
"$ENGINE" rm -f -v "$NAME-state" "$NAME-state2" >/dev/null
log "STATE_FILE: flushed on SIGTERM and loaded on the next start"

# --- STATE_FILE under /data as an arbitrary user id in group 0 (as OpenShift runs images) --
"$ENGINE" run -d --name "$NAME-uid" --user 123456:0 -p "127.0.0.1:$PORT2:8080" \
  -e STATE_FILE=/data/state.json -e STATE_FLUSH_INTERVAL_MS=0 "$TAG" >/dev/null 2>>"$WORK/engine.log"
wait_http "http://127.0.0.1:$PORT2/_emulator/health" 60 "$NAME-uid" || die "the container did not start as uid 123456"
created=$(curl -s --max-time 5 -X POST -H 'X-Auth-Token: demo-token' -H 'Content-Type: application/json' \
  -d '{"title":"written by uid 123456","text":"container test","start":1790000000000}' \
  "http://127.0.0.1:$PORT2/concerto/mpulse/api/annotations/v1")
[[ $created == *'"id"'* ]] || die "could not create an annotation as uid 123456: $created"
"$ENGINE" kill --signal TERM "$NAME-uid" >/dev/null
code=$("$ENGINE" wait "$NAME-uid" | tail -n 1)
[[ $code == 0 ]] || die "exit code after SIGTERM as uid 123456: $code (logs: $("$ENGINE" logs "$NAME-uid" 2>&1 | tail -n 5))"
"$ENGINE" cp "$NAME-uid:/data/state.json" "$WORK/uid-state.json" 2>>"$WORK/engine.log" || die "no /data/state.json written as uid 123456"
grep -q 'written by uid 123456' "$WORK/uid-state.json" || die "the state file written as uid 123456 lacks the annotation"
"$ENGINE" rm -f -v "$NAME-uid" >/dev/null
log "STATE_FILE under /data: written as uid 123456 in group 0"

# --- docker-compose.yml -------------------------------------------------------------------
PORT3=$(free_port)
COMPOSE_ENV=(EMULATOR_IMAGE="$TAG" EMULATOR_PORT="$PORT3" NODE_IMAGE="${NODE_IMAGE:-node:22-alpine}")
timeout 300 env "${COMPOSE_ENV[@]}" "${COMPOSE[@]}" -p "$PROJECT" -f docker-compose.yml up -d >"$WORK/compose.log" 2>&1 || {
  cat "$WORK/compose.log" >&2
  die "compose up failed"
}
wait_http "http://127.0.0.1:$PORT3/_emulator/health" 60 || die "the compose service did not answer on port $PORT3"
cid=$("$ENGINE" ps -a --format '{{.Names}}' | grep -m 1 -E "^${PROJECT}[-_]emulator[-_]1$" || true)
[[ -n $cid ]] || die "cannot find the compose container of project $PROJECT"
wait_healthy "$cid" 60 || die "the compose service did not become healthy"
node scripts/smoke.mjs "http://127.0.0.1:$PORT3" >/dev/null || die "smoke test against the compose service"
timeout 120 env "${COMPOSE_ENV[@]}" "${COMPOSE[@]}" -p "$PROJECT" -f docker-compose.yml down >>"$WORK/compose.log" 2>&1 || {
  cat "$WORK/compose.log" >&2
  die "compose down failed"
}
COMPOSE_ENV=()
[[ -z $("$ENGINE" ps -a --format '{{.Names}}' | grep -E "^${PROJECT}[-_]" || true) ]] || die "compose down left containers behind"
log "compose: up, healthy, smoke test, down: ok"

# --- the packed package in a new project, with the Testcontainers module ------------------
# testcontainers talks to the Docker API: Podman's compatible socket where Podman is the engine.
TC_ENV=(CLOUD_EMULATOR_IMAGE="$TAG")
if [[ $ENGINE == podman ]]; then
  # A service of this run's own, on its own socket: one left running by an earlier run (its
  # output pipe long closed) answers a ping but fails to create containers ("write child:
  # broken pipe").
  sock=$WORK/podman.sock
  podman system service --time=0 "unix://$sock" >"$WORK/podman-service.log" 2>&1 &
  PODMAN_SERVICE_PID=$!
  for _ in $(seq 1 50); do curl -s --max-time 1 --unix-socket "$sock" http://d/_ping >/dev/null 2>&1 && break; sleep 0.1; done
  # Ryuk, testcontainers' reaper, is an image of its own; the tests stop their containers themselves.
  TC_ENV+=(DOCKER_HOST="unix://$sock" TESTCONTAINERS_RYUK_DISABLED=true)
fi
t=$(ms)
env "${TC_ENV[@]}" node node_modules/vitest/vitest.mjs run test/testcontainers >"$WORK/module-test.log" 2>&1 || {
  tail -n 40 "$WORK/module-test.log" >&2
  die "the Testcontainers module tests (test/testcontainers) failed"
}
if grep -q 'skipped, CLOUD_EMULATOR_IMAGE' "$WORK/module-test.log"; then die "the Testcontainers module tests skipped"; fi
log "Testcontainers module tests: passed in $(($(ms) - t)) ms"

t=$(ms)
manifest_before=$(cksum <package.json)
npm pack --silent --pack-destination "$WORK" >"$WORK/pack.log" 2>&1 || {
  tail -n 30 "$WORK/pack.log" >&2
  die "npm pack failed"
}
TARBALL=$WORK/$(tail -n 1 "$WORK/pack.log")
[[ -f $TARBALL ]] || die "npm pack named no tarball: $(tail -n 3 "$WORK/pack.log")"
contents=$(tar -tzf "$TARBALL")
for f in package/LICENSE package/dist/index.js package/dist/cjs/index.js package/dist/cjs/package.json \
  package/dist/client/index.js package/dist/testcontainers/index.d.ts package/dist/ui/static/index.html package/fixtures/grids.json package/docs/running.md; do
  grep -qx "$f" <<<"$contents" || die "the tarball lacks $f"
done
tar -xzOf "$TARBALL" package/package.json | node -e 'const m = JSON.parse(require("fs").readFileSync(0, "utf8")); process.exit(m.scripts === undefined ? 0 : 1)' ||
  die "the tarball's package.json keeps scripts (prepack should strip them)"
[[ $(cksum <package.json) == "$manifest_before" ]] || die "package.json was left changed by npm pack (postpack should restore it)"
PROJECT_DIR=$WORK/consumer
mkdir -p "$PROJECT_DIR"
printf '{ "name": "consumer", "private": true, "type": "module" }\n' >"$PROJECT_DIR/package.json"
cp test/testcontainers/package/*.mjs "$PROJECT_DIR/"
(cd "$PROJECT_DIR" && timeout 300 npm install --no-audit --no-fund --prefer-offline "$TARBALL") >"$WORK/install.log" 2>&1 || {
  tail -n 30 "$WORK/install.log" >&2
  die "installing the tarball into a new project failed"
}
if grep -q EBADENGINE "$WORK/install.log"; then
  grep -A4 EBADENGINE "$WORK/install.log" >&2
  die "installing the tarball warns EBADENGINE on Node $(node --version)"
fi
# The test tools come from this repository, so that only the package itself is installed.
for tool in vitest testcontainers; do ln -s "$PWD/node_modules/$tool" "$PROJECT_DIR/node_modules/$tool"; done
# TypeScript's CommonJS defaults (moduleResolution node10) ignore "exports": the subpaths
# resolve through typesVersions.
printf '{ "compilerOptions": { "module": "commonjs", "target": "es2022", "strict": true, "noEmit": true, "skipLibCheck": true, "types": [] }, "files": ["use.ts"] }\n' >"$PROJECT_DIR/tsconfig.json"
printf "import { EmulatorClient } from 'cloud-emulator/client';\nimport { CloudEmulatorContainer } from 'cloud-emulator/testcontainers';\nimport { startEmulator } from 'cloud-emulator';\nexport const used = [EmulatorClient, CloudEmulatorContainer, startEmulator];\n" >"$PROJECT_DIR/use.ts"
node node_modules/typescript/bin/tsc -p "$PROJECT_DIR" >"$WORK/tsc-node10.log" 2>&1 || {
  cat "$WORK/tsc-node10.log" >&2
  die "the package's subpaths do not resolve under TypeScript's module: commonjs defaults"
}
for mode in import require; do
  (cd "$PROJECT_DIR" && env "${TC_ENV[@]}" LOAD_WITH=$mode node node_modules/vitest/vitest.mjs run) >"$WORK/consumer-$mode.log" 2>&1 || {
    tail -n 40 "$WORK/consumer-$mode.log" >&2
    die "the new project's test failed loading the package with $mode"
  }
  # vitest's summary, e.g. "Tests  2 passed (2)": a run that ran nothing has passed nothing.
  passed=$(sed 's/\x1b\[[0-9;]*m//g' "$WORK/consumer-$mode.log" | sed -n 's/^ *Tests *\([0-9][0-9]*\) passed.*/\1/p')
  [[ ${passed:-0} -ge 2 ]] || die "the new project's test ran ${passed:-no} tests loading the package with $mode"
done
log "package: packed, installed into a new project without engine warnings; its test (Testcontainers module, client, clock, journal count) passed with import and with require in $(($(ms) - t)) ms"

log "PASSED: image $SIZE_MB MB, build $((BUILD_MS / 1000)) s, start to answering $READY_MS ms, start to healthy $HEALTHY_MS ms, SIGTERM to exit $STOP_MS ms"
