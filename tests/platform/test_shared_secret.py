"""One secret key per install: every process signs and reads the same session cookies."""

from __future__ import annotations

import http.cookiejar
import re
import subprocess
import sys
import urllib.parse
import urllib.request

import pytest

from tests.processes import BASE_DIR, free_port, start_web, stop


def test_processes_racing_to_create_the_key_file_all_read_the_same_key(tmp_path):
    path = tmp_path / "secret_key"
    code = (
        "import sys, time; from pathlib import Path; from config.env import local_secret_key;"
        "time.sleep(max(0.0, float(sys.argv[2]) - time.time()));"
        "print(local_secret_key(Path(sys.argv[1])))"
    )
    import time

    start = str(time.time() + 1.5)  # all eight try at once
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(path), start],
            cwd=BASE_DIR,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    keys = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert len(keys) == 1 and len(next(iter(keys))) >= 32
    assert path.read_text().strip() in keys
    assert [p.name for p in tmp_path.iterdir()] == ["secret_key"]  # no drafts left


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_a_signed_in_user_stays_signed_in_across_debug_web_processes(django_user_model):
    django_user_model.objects.create_user("walker", password="a long enough pw 1")
    port = free_port()
    # DJANGO_DEBUG as `make run` sets it, and no DJANGO_SECRET_KEY: the install's own key.
    server = start_web(port, processes=2, DJANGO_DEBUG="true", DJANGO_SECRET_KEY="")
    base = f"http://127.0.0.1:{port}"
    try:
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        page = opener.open(f"{base}/accounts/login/", timeout=10).read().decode()
        found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert found, page[:500]
        token = found.group(1)
        form = urllib.parse.urlencode(
            {"username": "walker", "password": "a long enough pw 1", "csrfmiddlewaretoken": token}
        ).encode()
        request = urllib.request.Request(
            f"{base}/accounts/login/", data=form, headers={"Referer": f"{base}/accounts/login/"}
        )
        opener.open(request, timeout=10).read()
        assert any(c.name == "sessionid" for c in jar)
        landed = []
        for _ in range(50):  # a new connection each time: both processes answer
            with opener.open(f"{base}/", timeout=10) as response:
                landed.append(response.url)
        logged_out = [url for url in landed if "/accounts/login/" in url]
        assert not logged_out, f"{len(logged_out)} of 50 requests landed on the login page"
    finally:
        stop(server)
