#!/usr/bin/env bash
# Set everything up and run the app with the demo dataset. Embedded defaults: SQLite and a
# file-system Celery broker when DATABASE_URL / CELERY_BROKER_URL are not set, so no server is needed.
#   HOST    address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)
#   PORT    port to listen on (default 8000)
#   PYTHON  the interpreter that creates .venv on the first run (default python3; 3.11 or newer)
#   SPANJUDGE_SIMULATOR=1  the same as --simulator
#   SPANJUDGE_SMALL_MODEL=1  the same as --small-model
# Options:
#   --simulator  also start the simulated Ollama (tests/ollama_sim) on a free port: no model, no GPU. It is
#                allowed as an LLM server and offered in the run, DHP and comparison forms as
#                "Simulated server (no model)"; everything it answers is marked simulated.
#   --small-model  also start a real model on the CPU: llama-cpp-python serving SmolLM2-135M-Instruct
#                (scripts/small_model.sh; the first start builds it, 9 to 30 minutes on 2 cores; later starts reuse it).
#                It is offered in the run, DHP and comparison forms as "SmolLM2-135M (real, tiny - for trying
#                the tool)", with the ensemble preset `tiny`; what it answers is marked as a tiny model's.
set -euo pipefail
cd "$(dirname "$0")/.."
export DJANGO_DEBUG="${DJANGO_DEBUG:-true}"
HOST="${HOST:-127.0.0.1}"
PORT="${PORT:-8000}"
case "${SPANJUDGE_SIMULATOR:-0}" in
  1|true|yes|on) simulator=1 ;;
  0|false|no|off|"") simulator=0 ;;
  *) echo "  SPANJUDGE_SIMULATOR=${SPANJUDGE_SIMULATOR}: expected 1 or 0." >&2; exit 2 ;;
esac
case "${SPANJUDGE_SMALL_MODEL:-0}" in
  1|true|yes|on) small_model=1 ;;
  0|false|no|off|"") small_model=0 ;;
  *) echo "  SPANJUDGE_SMALL_MODEL=${SPANJUDGE_SMALL_MODEL}: expected 1 or 0." >&2; exit 2 ;;
esac
for arg in "$@"; do
  case "$arg" in
    --simulator) simulator=1 ;;
    --small-model) small_model=1 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "  Unknown option $arg (known: --simulator, --small-model, --help)." >&2; exit 2 ;;
  esac
done

# Refuse a taken port before anything else, and say what to do, instead of printing the banner first.
port_free() {
  "${PYTHON:-python3}" - "$HOST" "$PORT" <<'EOF'
import socket, sys

host, port = sys.argv[1].strip("[]"), int(sys.argv[2])
family = socket.AF_INET6 if ":" in host else socket.AF_INET
with socket.socket(family, socket.SOCK_STREAM) as sock:
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as runserver does: TIME_WAIT is no conflict
    try:
        sock.bind((host, port))
    except OSError as exc:
        sys.exit(f"  Port {port} on {host} is taken ({exc.strerror}).")
EOF
}
check_port() {
  if ! port_free; then
    echo "  Another program (perhaps another spanjudge) listens there. Stop it, or pick another port:" >&2
    echo "    PORT=$((PORT + 1)) bash scripts/run.sh" >&2
    exit 1
  fi
}
check_port

bash scripts/setup.sh run
mkdir -p var
bash scripts/local_env.sh  # a generated secret key in var/local.env, shared with commands in other terminals
.venv/bin/python manage.py migrate --noinput
demo="$(.venv/bin/python manage.py load_demo)"
# The documentation, served by the app at /docs/ (a failed build does not keep the app from starting).
if NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --quiet --site-dir var/site > var/docs-build.log 2>&1; then
  docs="http://$HOST:$PORT/docs/"
else
  docs="the docs/ folder (the site did not build: var/docs-build.log)"
fi
sim=""
if [ "$simulator" = 1 ]; then
  # Every preset's models, so whichever preset a form picks finds them.
  models="$(.venv/bin/python -c 'from evaluation.engine.presets import PRESETS
print(",".join(dict.fromkeys(m for p in PRESETS.values() for m in (*p.annotators, p.supervisor))))')"
  : > var/simulator.url
  .venv/bin/python -m tests.ollama_sim --port 0 --models "$models" --call-time 0.05 \
    > var/simulator.url 2> var/simulator.log &
  sim=$!
  for _ in $(seq 1 100); do [ -s var/simulator.url ] && break; sleep 0.1; done
  if [ ! -s var/simulator.url ]; then
    echo "  The simulated server did not start; see var/simulator.log." >&2
    kill "$sim" 2>/dev/null || true
    exit 1
  fi
  export SPANJUDGE_SIMULATOR_URL="$(head -n 1 var/simulator.url)"
fi
small=""
if [ "$small_model" = 1 ]; then
  echo "  Preparing the small real model (SmolLM2-135M on llama-cpp-python; the first time builds it: 9 to 30 minutes on 2 cores)..."
  if ! bash scripts/small_model.sh prepare > /dev/null 2> var/small-model-prepare.log; then
    tail -n 3 var/small-model-prepare.log >&2
    echo "  The small model could not be prepared; see var/small-model-prepare.log (or start with --simulator)." >&2
    kill $sim 2>/dev/null || true
    exit 1
  fi
  small_port="$("${PYTHON:-python3}" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  bash scripts/small_model.sh serve "$small_port" 2048 > var/small-model.log 2>&1 &
  small=$!
  up=0
  for _ in $(seq 1 120); do
    if "${PYTHON:-python3}" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$small_port/v1/models', timeout=5)" \
        2>/dev/null; then up=1; break; fi
    kill -0 "$small" 2>/dev/null || break
    sleep 0.5
  done
  if [ "$up" != 1 ]; then
    kill "$small" 2>/dev/null || true
    echo "  The small model's server did not start; see var/small-model.log." >&2
    kill $sim 2>/dev/null || true
    exit 1
  fi
  export SPANJUDGE_SMALL_MODEL_URL="openai+http://127.0.0.1:$small_port"
  # GPTScore reads echoed log-probabilities from an OpenAI-compatible server: this one gives them, aligned on the
  # tokens only after SmolLM2's BOS token (docs/guides/small-model.md).
  if [ -z "${GPTSCORE_URL:-}" ]; then
    export GPTSCORE_URL="$SPANJUDGE_SMALL_MODEL_URL" GPTSCORE_PREFIX="<|im_start|>"
  fi
fi
.venv/bin/python -m celery -A config worker --loglevel=WARNING --concurrency=2 --pool=threads \
  > var/worker.log 2>&1 &
worker=$!
server=""
# On Ctrl-C and on a plain `kill` of this script too: the app, the worker and the LLM servers must not outlive it.
# Each is sent TERM and waited for, so the script ends only once they are gone; one still there after 15 s (a
# worker finishing a long LLM call) gets KILL: its job resumes from its last finished call on the next start.
stop_children() {
  local pids="$server $worker $sim $small" pid
  kill $pids 2>/dev/null || true
  for _ in $(seq 1 150); do
    pid=""
    for pid in $pids; do kill -0 "$pid" 2>/dev/null && break; pid=""; done
    [ -z "$pid" ] && break
    sleep 0.1
  done
  kill -KILL $pids 2>/dev/null || true
  for pid in $pids; do wait "$pid" 2>/dev/null || true; done
}
trap stop_children EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
check_port  # again: something may have taken it while we set up
echo
echo "  spanjudge is running at  http://$HOST:$PORT/"
echo "  Demo logins (password: demo-pass-2026):"
echo "    admin       - admin: everything, incl. starting LLM runs, DHP runs and comparisons, and /admin/"
echo "    researcher  - researcher: datasets, campaigns, analytics, exports (sees runs, cannot start LLM jobs)"
echo "    expert1, expert2 - annotators: their own assignments only"
echo "$demo" | sed 's/^/  /'
echo "  Documentation: $docs"
if [ -n "$sim" ]; then
  echo "  Simulated server (no model) at $SPANJUDGE_SIMULATOR_URL: pick it in the run, DHP and comparison forms."
  echo "    Its answers are made up; everything computed from them is marked simulated. Log: var/simulator.log"
fi
if [ -n "$small" ]; then
  echo "  SmolLM2-135M (real, tiny - for trying the tool) at $SPANJUDGE_SMALL_MODEL_URL: pick it in the run, DHP and"
  echo "    comparison forms, with the preset \`tiny\`. A real model of 135M parameters on this CPU: its answers are"
  echo "    real and mostly poor, and marked as a tiny model's. Log: var/small-model.log"
fi
if [ -z "$sim" ] && [ -z "$small" ]; then
  echo "  No GPU? Restart with --small-model (a real tiny model on the CPU) or --simulator (no model) to try the LLM jobs."
fi
echo "  Next: ten minutes with the demo (README.md), then the docs' Getting started (a run without a GPU, a real run)."
echo "  Celery worker log: var/worker.log     Stop with Ctrl-C."
echo
# --noreload: one server process instead of a watcher plus a server (half the memory, one start-up log);
# restart the script after editing code. It runs in the background and the script waits for it: bash runs a
# trap only between commands, so a TERM sent while a foreground runserver runs would wait for runserver to end.
.venv/bin/python manage.py runserver --noreload "$HOST:$PORT" &
server=$!
wait "$server"
