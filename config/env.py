"""Typed helpers that read settings from the environment and fail loudly on bad values."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class Variable:
    """One environment variable as the code reads it: its name, its type and the default the code passes."""

    name: str
    kind: str
    default: object


# Every variable the settings read, in the order they read it (the docs' settings reference is built from it).
READ: dict[str, Variable] = {}


def _read(name: str, kind: str, default: object) -> None:
    READ.setdefault(name, Variable(name, kind, default))


def env_str(name: str, default: str) -> str:
    _read(name, "string", default)
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    _read(name, "boolean", default)
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use true/false, 1/0, yes/no)")


def env_int(name: str, default: int) -> int:
    _read(name, "integer", default)
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


def env_float(name: str, default: float) -> float:
    _read(name, "number", default)
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """One of `choices` (case-insensitive); anything else stops start-up with the accepted values."""
    _read(name, "one of " + ", ".join(f"`{c}`" for c in choices), default)
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={raw!r} is not one of {', '.join(choices)}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    _read(name, "list", default)
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [part.strip() for part in raw.split(",") if part.strip()]


def load_local_env(path: Path) -> None:
    """Read `KEY=value` lines of the local settings file `scripts/run.sh` writes on first start (a generated
    DJANGO_SECRET_KEY), so that commands typed in a second terminal work without exporting anything.

    The environment always wins: a variable already set is kept. Blank lines and `#` comments are skipped; a
    line without `=` is refused with its file and line number."""
    if not path.is_file():
        return
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.strip():
            raise ImproperlyConfigured(f"{path}, line {number}: expected NAME=value, got {raw!r}")
        os.environ.setdefault(name.strip(), value.strip())


# What each variable means, for the settings reference the docs build generates from READ. A variable the settings
# read without an entry here fails the strict docs build, so a new setting cannot go undocumented.
MEANINGS: dict[str, str] = {
    "SPANJUDGE_VAR_DIR": "Folder of the demo's SQLite file, its file-system broker, `local.env` and caches.",
    "DJANGO_DEBUG": "Development mode. `scripts/run.sh` sets `true`; `scripts/serve.sh` sets `false`.",
    "DJANGO_SECRET_KEY": "Signs sessions and tokens. Required outside DEBUG, at least 50 characters; "
                         "`scripts/run.sh` generates one in `var/local.env` on its first start.",
    "DJANGO_ALLOWED_HOSTS": "Host names the app answers to, comma-separated.",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "Origins with scheme allowed to post forms, e.g. `https://spanjudge.example.org`.",
    "DJANGO_SECURE_SSL_REDIRECT": "Redirect HTTP to HTTPS.",
    "DJANGO_SECURE_HSTS_SECONDS": "HSTS max-age; `31536000` in production.",
    "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS": "HSTS covers subdomains too.",
    "DJANGO_SECURE_HSTS_PRELOAD": "Ask browsers to preload HSTS.",
    "DJANGO_SECURE_COOKIES": "Session and CSRF cookies only over HTTPS.",
    "DJANGO_SECURE_PROXY_SSL_HEADER": "Trust `X-Forwarded-Proto: https` from the proxy in front; only behind a "
                                      "proxy that sets it and strips it from clients' requests.",
    "DATABASE_URL": "The database: PostgreSQL in production and tests, e.g. "
                    "`postgres://postgres@127.0.0.1:5432/spanjudge`; SQLite only for the demo.",
    "DATABASE_CONN_MAX_AGE": "Seconds a database connection is kept open between requests (PostgreSQL).",
    "AXES_FAILURE_LIMIT": "Wrong passwords for one username from one address before that pair is locked out.",
    "AXES_COOLOFF_MINUTES": "How long a lockout lasts.",
    "AXES_PROXY_COUNT": "Proxies in front of the app, so the client's address is read from `X-Forwarded-For`.",
    "DJANGO_PASSWORD_HASHERS": "Password hashers, comma-separated dotted paths, strongest first.",
    "SPANJUDGE_EXPORT_STORAGE": "Where export jobs keep the files a worker writes and a web host serves: `database` "
    "(rows of the database, in 1 MiB chunks, served with constant memory), `s3` (a bucket of an S3-compatible "
    "store through django-storages; see `SPANJUDGE_EXPORT_S3_BUCKET`) or `folder` (`SPANJUDGE_EXPORT_DIR` on this "
    "host, which web and workers must then share; refused by `SPANJUDGE_MULTIHOST`).",
    "SPANJUDGE_EXPORT_DIR": "The export folder of `SPANJUDGE_EXPORT_STORAGE=folder`; the web process and the "
                            "workers must share it.",
    "SPANJUDGE_EXPORT_RETENTION_DAYS": "Days a finished export's files are kept; each worker's sweep deletes older "
                                       "ones and the export's page says so (`0`: kept until deleted by hand). Files "
                                       "of exports that no longer exist (a deleted dataset's) are deleted whatever "
                                       "the value.",
    "SPANJUDGE_EXPORT_S3_BUCKET": "The bucket of `SPANJUDGE_EXPORT_STORAGE=s3` (required with it). Credentials come "
                                  "from boto3's own chain: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, or the "
                                  "host's role.",
    "SPANJUDGE_EXPORT_S3_ENDPOINT_URL": "The endpoint of an S3-compatible store other than AWS (MinIO, Ceph, "
                                        "Garage...), e.g. `https://s3.lab.example.org`; empty: AWS.",
    "SPANJUDGE_EXPORT_S3_REGION": "The bucket's region; empty: boto3's default.",
    "SPANJUDGE_EXPORT_S3_PREFIX": "The key prefix of export files in the bucket (`PREFIX/EXPORT_ID/FILE`).",
    "IMPORT_MAX_UPLOAD_MB": "Uploads (item and annotation files) above this size are refused with 413.",
    "CELERY_BROKER_URL": "The Celery broker, e.g. `redis://127.0.0.1:6379/0`; empty: a file-system broker "
                         "under `SPANJUDGE_VAR_DIR` (the demo).",
    "CELERY_TASK_TIME_LIMIT": "Seconds after which a worker kills a task.",
    "CELERY_TASK_SOFT_TIME_LIMIT": "Seconds after which a task is asked to stop.",
    "CELERY_TASK_ALWAYS_EAGER": "Run tasks in the calling process instead of a worker (debugging only).",
    "RUN_STALE_SECONDS": "A running job without a heartbeat for this long is taken over by the next worker.",
    "RUN_DB_PATIENCE_SECONDS": "How long a job keeps retrying to store an arrived LLM answer while the database "
                               "is unreachable.",
    "CELERY_QUEUE": "The queue tasks go to and workers consume (`scripts/serve.sh worker --queues` names what a "
                    "worker consumes instead).",
    "OLLAMA_URL": "The default LLM server (Ollama).",
    "OLLAMA_URLS": "The known LLM servers, comma-separated: `http://HOST:PORT` (Ollama) or "
                   "`openai+http://HOST:PORT` (OpenAI-compatible). A job may name only these (and `OLLAMA_URL`); "
                   "a job given no server uses all of them.",
    "LLM_ALLOW_LOOPBACK": "Development and tests only: also allow any LLM server on 127.0.0.1 or localhost.",
    "OLLAMA_TIMEOUT": "Seconds before one LLM request is given up (then retried).",
    "LLM_LOAD_TIMEOUT": "Seconds to wait for an answer's first byte (queueing and a model load).",
    "LLM_IDLE_TIMEOUT": "Seconds of silence allowed between an answer's streamed chunks (Ollama).",
    "OLLAMA_KEEP_ALIVE": "How long Ollama keeps a model loaded after a request.",
    "OLLAMA_NUM_CTX": "Context length: `auto` sizes it per (run, model) to the longest prompt plus the answer "
                      "budget, capped at the model's length; an integer pins it.",
    "LLM_ANSWER_TOKENS": "Answer budget (`num_predict` / `max_tokens`, thinking included); a cut answer is asked "
                         "again once with twice this.",
    "OLLAMA_PARALLEL": "Requests in flight per server and model (the run form's Parallel): at most, since a run sends "
                       "a server no more than it serves at once (LLM_SERVER_SLOTS, llama.cpp's /props).",
    "LLM_SERVER_SLOTS": "How many requests each server serves at once, where the server does not say so itself: "
                        "comma-separated `ADDRESS=N` (e.g. `http://gpu1:11434=4`, its `OLLAMA_NUM_PARALLEL`). A run "
                        "sends a server no more than that. The small model's server needs no entry (it serves one "
                        "at a time), nor does llama.cpp's llama-server (its /props says `total_slots`).",
    "ENSEMBLE_PRESET": "Default annotators and supervisor: `paper`, `workstation` or `laptop`.",
    "LLM_SEED": "The sampling seed sent to every model, and the seed of comparison bootstraps.",
    "DHP_PERTURB_MODEL": "The model that writes missing LLM-based DHP perturbations; empty: the evaluator's "
                         "model (the preset's supervisor for the ensemble).",
    "GPTSCORE_URL": "OpenAI-compatible server answering `/v1/completions` with `echo` and `logprobs` "
                    "(vLLM 0.5.2 or newer) for `gptscore:MODEL`; it is on the server allowlist.",
    "GPTSCORE_PREFIX": "Text sent before every GPTScore prompt: the model's BOS token (SmolLM2: `<|im_start|>`) where "
    "the server would otherwise give each echoed log-probability to the next token (llama-cpp-python with a model "
    "that adds no BOS); the GPTScore preflight refuses such a server without it.",
    "COMPARISON_BOOTSTRAP": "Bootstrap resamples per correlation interval of a comparison job.",
    "GPTSCORE_HF_PRECISION": "The precision `gptscore-hf:MODEL` computes in unless a comparison names its own "
                             "(`precision`): `auto` keeps the checkpoint's precision on the CPU and runs an fp32 "
                             "decoder model in bf16 on a GPU that has it (encoder-decoder models stay fp32); "
                             "`fp32`, `bf16`, `fp16` force one. It is part of each call's cache key and is recorded "
                             "in the comparison's results.",
    "GPTSCORE_HF_BATCH_TOKENS": "Tokens per batch of `gptscore-hf:MODEL` (rows x padded length; pairs are sorted "
                                "by length first); 0: 16384 on a GPU, 4096 on the CPU.",
    "JOB_SWEEP_SECONDS": "How often each worker looks for stale jobs and queues them again (0: only at worker start).",
    "DECOY_EXPLAIN_AUTO": "Start the decoy explanation job when a campaign with decoys is created and a server of "
                          "its runs has their models: each decoy's explanation is then written by the model behind "
                          "its evaluator label (the campaign stays a draft until it ends). `false`: only the decoys "
                          "page's button or `POST /api/campaigns/ID/decoys/explain` starts it.",
    "PLANTED_WRITE_AUTO": "Start the planted-error writing job when a campaign with planted outputs is created and "
                          "the server of its first evaluator run has that run's model: each planted output's "
                          "rule-made error is then replaced by one the model writes, where its answer is usable. "
                          "Such a campaign starts as a draft and opens once the job has ended. `false` (default): "
                          "only the decoys page's button or `POST /api/campaigns/ID/planted/write` starts it.",
    "LLM_CACHE_ORDER": "Order LLM calls that share a long prompt prefix back to back on one slot (prompt caches).",
    "LLM_TRANSPORT_RETRIES": "Retries of an LLM request that failed in transport (connection, 5xx, 408, 429).",
    "LLM_RETRY_BACKOFF": "Seconds before the first transport retry; doubled on each later one.",
    "LLM_RETRY_MAX_BACKOFF": "The longest wait between two transport retries, in seconds.",
    "LLM_ANSWER_ATTEMPTS": "How often an answer that cannot be parsed is asked for, the first time included.",
    "LLM_RETRY_TEMPERATURE": "The temperature of a repeated request for an answer that could not be parsed.",
    "LLM_REPAIR": "Ask the model once to repair an answer it wrote in the wrong format before asking again.",
    "SPANJUDGE_SIMULATOR_URL": "The simulated server `scripts/run.sh --simulator` started (set by the script): "
    "allowlisted and offered in the run, DHP and comparison forms as \"Simulated server (no model)\".",
    "SPANJUDGE_SMALL_MODEL_URL": "The llama-cpp-python server with SmolLM2-135M that `scripts/run.sh --small-model` "
    "started (set by the script, `openai+http://...`): allowlisted and offered in the run, DHP and comparison forms "
    "as \"SmolLM2-135M (real, tiny - for trying the tool)\".",
    "JOIN_RATE_LIMIT": "How often one address may start a study from a participant link (e.g. 30/h).",
    "GAMMA_MAX_PENDING_PER_USER": "Gamma (span agreement) tasks one user may have queued or running at once; "
    "one more answers 429 with Retry-After.",
    "LOG_LEVEL": "Log level of the app and of the worker `serve.sh` starts.",
    "SPANJUDGE_WORKER_SILENCE_MINUTES": "The admins' home page warns, with what is queued, when no worker consuming "
    "`CELERY_QUEUE` has recorded a beat for this many minutes (workers beat every 30 s).",
    "SPANJUDGE_MULTIHOST": "Web and workers on hosts of their own: start-up refuses SQLite (`DATABASE_URL`), the "
    "file-system broker (`CELERY_BROKER_URL`) and a local export folder (`SPANJUDGE_EXPORT_STORAGE=folder`), "
    "which a second host cannot reach.",
}

# Defaults the code computes (from the checkout's folder or another variable), written as a reader should read them.
SHOWN_DEFAULTS: dict[str, str] = {
    "SPANJUDGE_VAR_DIR": "`var/` in the checkout",
    "DATABASE_URL": "SQLite file `demo.sqlite3` in `SPANJUDGE_VAR_DIR`",
    "SPANJUDGE_EXPORT_DIR": "`exports/` in `SPANJUDGE_VAR_DIR`",
    "CELERY_BROKER_URL": "empty: a file-system broker in `SPANJUDGE_VAR_DIR/broker`",
    "DJANGO_SECRET_KEY": "empty: a development key when `DJANGO_DEBUG=true`, else start-up stops",
    "OLLAMA_URLS": "the value of `OLLAMA_URL`",
    "LLM_LOAD_TIMEOUT": "the value of `OLLAMA_TIMEOUT`",
    "LLM_IDLE_TIMEOUT": "120, or `LLM_LOAD_TIMEOUT` when that is smaller",
    "CELERY_TASK_SOFT_TIME_LIMIT": "86340 (a minute under the hard limit)",
    "JOB_SWEEP_SECONDS": "the value of `RUN_STALE_SECONDS`",
    "LLM_TRANSPORT_RETRIES": "4 (evaluation.llm.policy.RetryPolicy)",
    "LLM_RETRY_BACKOFF": "0.5 (evaluation.llm.policy.RetryPolicy)",
    "LLM_RETRY_MAX_BACKOFF": "30 (evaluation.llm.policy.RetryPolicy)",
    "LLM_ANSWER_ATTEMPTS": "4 (evaluation.llm.policy.RetryPolicy)",
    "LLM_RETRY_TEMPERATURE": "0.1 (evaluation.llm.policy.RetryPolicy)",
    "LLM_REPAIR": "true (evaluation.llm.policy.RetryPolicy)",
}


@dataclass(frozen=True)
class ScriptVariable:
    """A variable read outside the settings: by gunicorn's configuration, a shell script or the tests."""

    name: str
    default: str
    read_by: str
    meaning: str


SCRIPT_VARIABLES: tuple[ScriptVariable, ...] = (
    ScriptVariable("HOST", "`127.0.0.1`", "`scripts/run.sh`, `config/gunicorn.py`",
                   "Address the server listens on (`0.0.0.0` for every interface)."),
    ScriptVariable("PORT", "`8000`", "`scripts/run.sh`, `config/gunicorn.py`",
                   "Port the server listens on; `run.sh` stops before starting anything when it is taken."),
    ScriptVariable("SPANJUDGE_SIMULATOR", "`0`", "`scripts/run.sh`",
                   "`1`: start the simulated LLM server beside the app, as `run.sh --simulator` does."),
    ScriptVariable("PYTHON", "`python3`", "`scripts/setup.sh` (through `run.sh`, `test.sh`)",
                   "The interpreter (3.11 or newer) that creates `.venv` on the first run."),
    ScriptVariable("WEB_CONCURRENCY", "the number of CPUs", "`config/gunicorn.py`", "gunicorn worker processes."),
    ScriptVariable("GUNICORN_THREADS", "`4`", "`config/gunicorn.py`", "Threads per gunicorn process."),
    ScriptVariable("GUNICORN_TIMEOUT", "`120`", "`config/gunicorn.py`",
                   "Seconds before gunicorn restarts a stuck worker."),
    ScriptVariable("GUNICORN_MAX_REQUESTS", "`2000`", "`config/gunicorn.py`",
                   "Requests after which a gunicorn worker is recycled (bounded memory)."),
    ScriptVariable("GUNICORN_ACCESS_LOG", "`-` (standard output)", "`config/gunicorn.py`",
                   "Where gunicorn writes its access log; empty: none."),
    ScriptVariable("FORWARDED_ALLOW_IPS", "`127.0.0.1,::1`", "`config/gunicorn.py`",
                   "Addresses of the proxy allowed to set `X-Forwarded-*` headers."),
    ScriptVariable("CELERY_CONCURRENCY", "`2`", "`scripts/serve.sh`", "Threads of the Celery worker it starts."),
    ScriptVariable("AWS_ACCESS_KEY_ID", "unset", "boto3 (`SPANJUDGE_EXPORT_STORAGE=s3`)",
                   "The access key of the export bucket, with `AWS_SECRET_ACCESS_KEY`; unset: the host's role."),
    ScriptVariable("AWS_SECRET_ACCESS_KEY", "unset", "boto3 (`SPANJUDGE_EXPORT_STORAGE=s3`)",
                   "The secret key that goes with `AWS_ACCESS_KEY_ID`."),
    ScriptVariable("BACKUP_DIR", "`var/backups`", "`scripts/backup.sh`", "Where backups go when no folder is given."),
    ScriptVariable("SPANJUDGE_DATA", "`../shared/data`", "tests and benches",
                   "Folder with the licensed `meta_eval/` and `rotowire/` datasets; tests that need them skip "
                   "without it."),
    ScriptVariable("SPANJUDGE_DISRUPTIVE_TESTS", "unset", "tests",
                   "`1` runs the fault test that restarts the PostgreSQL cluster (`.ci/run` sets it; never on a "
                   "shared machine)."),
    ScriptVariable("SPANJUDGE_CACHE", "`~/.cache/spanjudge`", "tests, `scripts/small_model.sh`",
                   "Where the Label Studio interop test keeps its own virtualenv, and where the small real model's "
                   "server (llama-cpp-python, built once) and its GGUF are kept, keyed by version."),
    ScriptVariable("SPANJUDGE_SMALL_MODEL", "`0`", "`scripts/run.sh`",
                   "`1`: start the small real model (SmolLM2-135M on llama-cpp-python) beside the app, as "
                   "`run.sh --small-model` does."),
    ScriptVariable("SPANJUDGE_SMALL_MODEL_THREADS", "`1`", "`scripts/small_model.sh`",
                   "CPU threads of the small model's server. One, because on a shared 2-core machine a second "
                   "thread spins against the other work: 64 tokens took 68 s with two threads, 5.8 s with one."),
    ScriptVariable("SPANJUDGE_COLLECT_ANSWERS", "unset", "tests (`tests/real_model`)",
                   "A file the real-model tier appends its runs' answers to, as JSON lines (how "
                   "`tests/data/smollm2_answers.jsonl` was made)."),
)
