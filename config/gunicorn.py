"""gunicorn settings for scripts/serve.sh (a plain Python file gunicorn reads with -c); all from the environment."""

from __future__ import annotations

import multiprocessing
import os

bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
# Threaded workers: a save spends most of its time waiting on PostgreSQL, so threads keep the cores busy
# while each thread keeps its own persistent database connection (DATABASE_CONN_MAX_AGE).
worker_class = "gthread"
workers = int(os.environ.get("WEB_CONCURRENCY", str(multiprocessing.cpu_count())))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "120"))  # exports stream; imports of large files take a while
graceful_timeout = 30
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "2000"))  # recycle workers: bounded memory
max_requests_jitter = 200
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-") or None  # empty: no access log
errorlog = "-"
# Only the proxy in front may set X-Forwarded-*; list its address when it is not on this machine.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
# gunicorn 23+ opens a control socket under ~/.gunicorn by default; one per machine user would clash between
# instances (serve.sh, the load bench, tests), and nothing here uses it.
control_socket_disable = True
