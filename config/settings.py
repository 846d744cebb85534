"""Project settings, driven by environment variables (12-factor); the docs list them (reference/settings)."""

from __future__ import annotations

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from comparison.engine.hf_plan import PRECISIONS
from config.env import env_bool, env_choice, env_float, env_int, env_list, env_str, load_local_env

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("SPANJUDGE_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)
# scripts/run.sh writes var/local.env (a generated secret key) on first start; exported variables win over it.
LOCAL_ENV_FILE = VAR_DIR / "local.env"
load_local_env(LOCAL_ENV_FILE)

DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = env_str("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        # A built-in key is public: anyone could forge sessions and password-reset tokens with it.
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY is not set. Outside DEBUG spanjudge refuses to start with a built-in key: set "
            "DJANGO_SECRET_KEY to a long random value (python -c 'import secrets; print(secrets.token_urlsafe(50))'), "
            "or DJANGO_DEBUG=true for local development."
        )
    SECRET_KEY = "django-insecure-development-key-set-DJANGO_SECRET_KEY-in-production"
MIN_SECRET_KEY_LENGTH = 50  # Django's own deploy check (security.W009) warns below this
if not DEBUG and len(SECRET_KEY) < MIN_SECRET_KEY_LENGTH:
    raise ImproperlyConfigured(
        f"DJANGO_SECRET_KEY is {len(SECRET_KEY)} characters long; outside DEBUG it must have at least "
        f"{MIN_SECRET_KEY_LENGTH} (python -c 'import secrets; print(secrets.token_urlsafe(50))')."
    )
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

# HTTPS: off by default (the demo and tests speak plain HTTP); production turns them on (docs/guides/production.md).
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
if env_bool("DJANGO_SECURE_PROXY_SSL_HEADER", False):
    # Only behind a proxy that sets X-Forwarded-Proto itself and strips it from clients' requests.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.forms",  # the widget templates, for FORM_RENDERER below
    "django_htmx",
    "template_partials",
    "ninja",  # serves the API docs' Swagger UI from our static files (the CSP allows no CDN)
    "csp",
    "axes",
    # The project's layers, bottom first; imports only point down (see .importlinter).
    "jobs",
    "accounts",
    "corpus",
    "evaluation",
    "annotator",
    "quality",
    "studies",
    "analytics",
    "dhp",
    "comparison",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.UploadSizeLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "config.middleware.RowIdRangeMiddleware",
    "config.middleware.InputCleaningMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "config.middleware.LoginRequiredExceptApiMiddleware",
    "config.middleware.AccessErrorMiddleware",
    "config.middleware.AppNotFoundMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "studies.middleware.ParticipantScopeMiddleware",  # a study link's participant reaches their study only
    "csp.middleware.CSPMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks
]

# Content-Security-Policy (django-csp 4.x dict style): scripts and styles only from our own static files; the
# pages keep data in json_script tags and behaviour in static/js, and htmx is told not to inject its
# indicator <style> (meta htmx-config in _base.html). Charts are data: SVG images.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

FORM_RENDERER = "config.forms.AppFormRenderer"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# SQLite is only the zero-setup default of the demo; tests and CI set DATABASE_URL to PostgreSQL.
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'demo.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A write transaction takes the lock when it begins (BEGIN IMMEDIATE) and waits up to the timeout for it: a
    # deferred one that read first cannot upgrade its lock and fails at once with "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(timeout=30, transaction_mode="IMMEDIATE")
    DATABASES["default"]["CONN_MAX_AGE"] = 0

AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # refuses a locked-out login before the password is checked
    "django.contrib.auth.backends.ModelBackend",
]
# Login throttling (django-axes): after AXES_FAILURE_LIMIT wrong passwords for one username from one address
# that pair is locked for AXES_COOLOFF_MINUTES; the right password is refused meanwhile.
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = env_float("AXES_COOLOFF_MINUTES", 15.0) / 60.0  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_IPWARE_PROXY_COUNT = env_int("AXES_PROXY_COUNT", 0)
PASSWORD_HASHERS = env_list(
    "DJANGO_PASSWORD_HASHERS",
    ["django.contrib.auth.hashers.PBKDF2PasswordHasher"],
)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)  # whitenoise warns on every request when it is missing
WHITENOISE_USE_FINDERS = True  # serve static/ directly without collectstatic (demo and tests)
STATICFILES_DIRS = [BASE_DIR / "static"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Files that export jobs write on a worker and a web host serves (analytics.exports.storage). `database`: rows of the
# database every host already shares; `s3`: a bucket of any S3-compatible store (django-storages); `folder`: a folder
# of this host, which web and workers must then share (one machine, or a network file system).
EXPORT_STORAGE = env_choice("SPANJUDGE_EXPORT_STORAGE", "database", ("database", "s3", "folder"))
EXPORT_DIR = Path(env_str("SPANJUDGE_EXPORT_DIR", str(VAR_DIR / "exports")))
# Days a finished export's files are kept; the workers' sweep deletes older ones (0: kept until deleted by hand).
EXPORT_RETENTION_DAYS = env_int("SPANJUDGE_EXPORT_RETENTION_DAYS", 30)
if EXPORT_RETENTION_DAYS < 0:
    raise ImproperlyConfigured(f"SPANJUDGE_EXPORT_RETENTION_DAYS={EXPORT_RETENTION_DAYS} is negative (0 keeps files)")
# The bucket, read whatever the choice so that the settings reference lists them; used with `s3` only.
EXPORT_S3 = {
    "bucket_name": env_str("SPANJUDGE_EXPORT_S3_BUCKET", ""),
    "endpoint_url": env_str("SPANJUDGE_EXPORT_S3_ENDPOINT_URL", "") or None,
    "region_name": env_str("SPANJUDGE_EXPORT_S3_REGION", "") or None,
    "location": env_str("SPANJUDGE_EXPORT_S3_PREFIX", "exports"),
}
if EXPORT_STORAGE == "database":
    _exports_storage: dict[str, object] = {"BACKEND": "analytics.exports.storage.DatabaseStorage"}
elif EXPORT_STORAGE == "folder":
    _exports_storage = {"BACKEND": "django.core.files.storage.FileSystemStorage",
                        "OPTIONS": {"location": str(EXPORT_DIR), "allow_overwrite": True}}
else:
    if not EXPORT_S3["bucket_name"]:
        raise ImproperlyConfigured("SPANJUDGE_EXPORT_STORAGE=s3 needs SPANJUDGE_EXPORT_S3_BUCKET (the bucket's name)")
    # Credentials come from boto3's own chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the host's role).
    # A download reads the object whole into a spooled file before its first byte, moving to disk past 8 MiB
    # (django-storages' default of 0 would keep it all in memory); objects keep the bucket's default ACL.
    _exports_storage = {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {
        **EXPORT_S3, "file_overwrite": True, "default_acl": None, "max_memory_size": 8 * 1024 * 1024}}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "exports": _exports_storage,
}
# Uploads larger than this (item files, annotation files) are refused with 413 before they are read.
IMPORT_MAX_UPLOAD_MB = env_int("IMPORT_MAX_UPLOAD_MB", 512)

# API lists are paginated (?limit=&offset=, answers {"items", "count"}); no page is larger than this.
NINJA_PAGINATION_PER_PAGE = 100
NINJA_PAGINATION_MAX_LIMIT = 1000
NINJA_PAGINATION_CLASS = "config.pagination.BoundedLimitOffsetPagination"

CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Celery: Redis in production and tests; the demo falls back to an embedded SQLite-backed broker
# (kombu's SQLAlchemy-free "filesystem" transport) so that it needs no server.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "")
if not CELERY_BROKER_URL:
    _queue_dir = VAR_DIR / "broker"
    (_queue_dir / "processed").mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue_dir),
        "data_folder_out": str(_queue_dir),
        "processed_folder": str(_queue_dir / "processed"),
        "control_folder": str(_queue_dir / "control"),
        "store_processed": False,
    }
# Results a worker computes for the web (the API's gamma): shared by every process, so not the locmem default.
# Redis when the broker is Redis (a key prefix keeps them apart from the queue); files under VAR_DIR otherwise.
RESULTS_CACHE = "results"
# Gamma computations (minutes of CPU each) one user may have queued or running at once; one more is a 429.
GAMMA_MAX_PENDING_PER_USER = env_int("GAMMA_MAX_PENDING_PER_USER", 2)
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CACHES[RESULTS_CACHE] = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CELERY_BROKER_URL,
                             "KEY_PREFIX": "spanjudge-results"}
else:
    CACHES[RESULTS_CACHE] = {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                             "LOCATION": str(VAR_DIR / "results-cache")}
# Joining a study by its link (POST /join/<token>/) is limited per client address with django-ratelimit, in
# the shared results cache so every web process counts together; the address is the one django-axes uses.
JOIN_RATE_LIMIT = env_str("JOIN_RATE_LIMIT", "30/h")
RATELIMIT_USE_CACHE = RESULTS_CACHE
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 24 * 3600)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 24 * 3600 - 60)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
RUN_STALE_SECONDS = env_int("RUN_STALE_SECONDS", 90)  # a running job with no heartbeat for this long is resumable
# Every worker sweeps this often for jobs whose worker died and re-queues them (0: only when a worker starts).
JOB_SWEEP_SECONDS = env_int("JOB_SWEEP_SECONDS", RUN_STALE_SECONDS)
# How long a run keeps retrying to store an arrived LLM answer while PostgreSQL is unreachable (a restart).
RUN_DB_PATIENCE_SECONDS = env_float("RUN_DB_PATIENCE_SECONDS", 120.0)
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "spanjudge")
CELERY_IMPORTS = ["tasks.jobs", "tasks.maintenance", "tasks.analytics"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# Ollama and the ensemble defaults. A run may only name a server from OLLAMA_URLS (plus OLLAMA_URL): the
# app fetches that URL itself, so a free-form one would let a user probe the network behind the server.
OLLAMA_URL = env_str("OLLAMA_URL", "http://127.0.0.1:11434")
# The known LLM servers, comma-separated: http://HOST:PORT (Ollama) or openai+http://HOST:PORT (vLLM,
# llama.cpp server, TGI). A job given no servers uses all of them; a job may name only these and OLLAMA_URL.
OLLAMA_URLS = env_list("OLLAMA_URLS", [OLLAMA_URL])
# Development and tests only: also allow any server on this machine (127.0.0.1, localhost), such as simulated
# servers on random ports. Off in production, where loopback services are exactly what the allowlist protects.
LLM_ALLOW_LOOPBACK = env_bool("LLM_ALLOW_LOOPBACK", False)
# The simulated Ollama that `scripts/run.sh --simulator` starts beside the app (no model, no GPU): allowed like the
# servers above and offered in the run, DHP and comparison forms as "Simulated server (no model)". Blank: none.
SIMULATOR_URL = env_str("SPANJUDGE_SIMULATOR_URL", "")
# The small real model `scripts/run.sh --small-model` starts (llama-cpp-python serving SmolLM2-135M, an
# `openai+http://` address): allowed like the servers above and offered in the forms under its own name. Blank: none.
SMALL_MODEL_URL = env_str("SPANJUDGE_SMALL_MODEL_URL", "")
OLLAMA_TIMEOUT = env_float("OLLAMA_TIMEOUT", 600.0)
# Requests stream: an answer's first byte may wait for queueing and a model load (LLM_LOAD_TIMEOUT, default
# OLLAMA_TIMEOUT), later chunks must come within LLM_IDLE_TIMEOUT of each other.
LLM_LOAD_TIMEOUT = env_float("LLM_LOAD_TIMEOUT", OLLAMA_TIMEOUT)
LLM_IDLE_TIMEOUT = env_float("LLM_IDLE_TIMEOUT", min(120.0, LLM_LOAD_TIMEOUT))
OLLAMA_KEEP_ALIVE = env_str("OLLAMA_KEEP_ALIVE", "10m")
# `auto`: one num_ctx per (run, model), the smallest multiple of 1024 holding its longest prompt and the answer
# budget, capped at the model's context length; an integer pins it.
_NUM_CTX = env_str("OLLAMA_NUM_CTX", "auto").strip().lower()
OLLAMA_NUM_CTX: int | None = None if _NUM_CTX in ("", "auto") else int(_NUM_CTX)
LLM_ANSWER_TOKENS = env_int("LLM_ANSWER_TOKENS", 2048)  # num_predict / max_tokens of an answer (thinking included)
# Calls sharing a long prefix go back to back on one slot, so the servers' prompt caches do the work
# (evaluation.runs.cache_order); off sends them in the order they were planned (the bench's naive order).
LLM_CACHE_ORDER = env_bool("LLM_CACHE_ORDER", True)
OLLAMA_PARALLEL = env_int("OLLAMA_PARALLEL", 4)
# ADDRESS=N entries: the requests a server serves at once, for servers that do not report it (evaluation.runs.backends).
LLM_SERVER_SLOTS = env_list("LLM_SERVER_SLOTS", [])
ENSEMBLE_PRESET = env_str("ENSEMBLE_PRESET", "paper")
LLM_SEED = env_int("LLM_SEED", 42)
# The one retry policy of every LLM job: its defaults are in evaluation.llm.policy.RetryPolicy; these variables
# override them (transport retries of a failing server, their backoff in seconds, doubling up to a cap; tries of
# an answer that does not parse and their temperature; whether an unreadable answer is sent back once).
LLM_RETRY = {
    field: value for field, value in {
        "transport_retries": env_int("LLM_TRANSPORT_RETRIES", None),  # type: ignore[arg-type]
        "backoff": env_float("LLM_RETRY_BACKOFF", None),  # type: ignore[arg-type]
        "max_backoff": env_float("LLM_RETRY_MAX_BACKOFF", None),  # type: ignore[arg-type]
        "answer_attempts": env_int("LLM_ANSWER_ATTEMPTS", None),  # type: ignore[arg-type]
        "retry_temperature": env_float("LLM_RETRY_TEMPERATURE", None),  # type: ignore[arg-type]
        "repair": env_bool("LLM_REPAIR", None),  # type: ignore[arg-type]
    }.items() if value is not None
}
# Start the job that has each decoy explained by its evaluator's own model when a campaign with decoys is created
# (quality.decoy_explaining); false leaves it to the decoys page's button.
DECOY_EXPLAIN_AUTO = env_bool("DECOY_EXPLAIN_AUTO", True)
# Start the job that has a model write each planted output's error when a campaign with planted outputs is created
# (quality.planted_writing); such a campaign then starts as a draft. False leaves it to the decoys page's button.
PLANTED_WRITE_AUTO = env_bool("PLANTED_WRITE_AUTO", False)
# The model that writes missing LLM-based DHP perturbations (blank: the evaluator's model, or the preset's supervisor).
DHP_PERTURB_MODEL = env_str("DHP_PERTURB_MODEL", "")
GPTSCORE_URL = env_str("GPTSCORE_URL", "")
# Text sent before every GPTScore prompt: the model's BOS token where the server would otherwise misalign its echoed
# log-probabilities (llama-cpp-python with a model that adds no BOS, e.g. SmolLM2: "<|im_start|>"). Blank: none.
GPTSCORE_PREFIX = env_str("GPTSCORE_PREFIX", "")  # an OpenAI-compatible /v1 server with echo+logprobs (vLLM, llama.cpp)
COMPARISON_BOOTSTRAP = env_int("COMPARISON_BOOTSTRAP", 1000)  # resamples per bootstrap interval
GPTSCORE_HF_PRECISION = env_choice("GPTSCORE_HF_PRECISION", "auto", PRECISIONS)  # gptscore-hf's compute dtype
GPTSCORE_HF_BATCH_TOKENS = env_int("GPTSCORE_HF_BATCH_TOKENS", 0)  # 0: the device's default budget

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # django-axes logs every login at INFO; lockouts and failed attempts it logs at WARNING, and those stay.
    # Django's own console handler would print each of its messages a second time beside the root's.
    "loggers": {"django": {"handlers": [], "level": "INFO"}, "django.db.backends": {"level": "WARNING"},
                "axes": {"level": "WARNING"}},
}

# Health: /healthz answers plain HTTP too (a proxy's or orchestrator's probe does not follow a redirect to HTTPS);
# the admins' home page warns when no worker consuming CELERY_QUEUE has beaten for this many minutes.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
WORKER_BEAT_SECONDS = 30
WORKER_SILENCE_MINUTES = env_int("SPANJUDGE_WORKER_SILENCE_MINUTES", 5)

# Several hosts (web, workers, database, broker apart): refuse the parts that work on one machine only, each by the
# setting that replaces it. A second host cannot open this host's SQLite file, broker folder or export folder.
MULTIHOST = env_bool("SPANJUDGE_MULTIHOST", False)
if MULTIHOST:
    if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
        raise ImproperlyConfigured("SPANJUDGE_MULTIHOST=true refuses SQLite: set DATABASE_URL to a PostgreSQL "
                                   "database every host reaches (postgres://USER@HOST:5432/NAME).")
    if CELERY_BROKER_URL.startswith(("filesystem:", "memory:")):  # a folder, or this process's memory
        raise ImproperlyConfigured("SPANJUDGE_MULTIHOST=true refuses the file-system broker: set CELERY_BROKER_URL to "
                                   "a Redis server every host reaches (redis://HOST:6379/0).")
    if EXPORT_STORAGE == "folder":
        raise ImproperlyConfigured("SPANJUDGE_MULTIHOST=true refuses a local export folder (SPANJUDGE_EXPORT_STORAGE="
                                   "folder): set SPANJUDGE_EXPORT_STORAGE to database or s3.")

if not DEBUG:
    SESSION_COOKIE_HTTPONLY = True
    X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# PromptTemplate's "one active template per kind and task" needs NULLS NOT DISTINCT, which only PostgreSQL has.
SILENCED_SYSTEM_CHECKS = ["models.W047"]
