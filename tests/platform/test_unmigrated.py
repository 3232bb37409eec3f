"""A command run before the database is migrated says so in one line, not a traceback."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
from django.db import connection

from tests.processes import BASE_DIR, child_env


def test_an_import_into_an_unmigrated_database_names_the_missing_step(tmp_path: Path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "1", "title": "A title", "text": "Some text."}\n')
    s = connection.settings_dict
    name = f"unmigrated_{uuid.uuid4().hex[:8]}"
    admin = psycopg.connect(host=s["HOST"], dbname=s["NAME"], user=s["USER"], autocommit=True)
    admin.execute(f'CREATE DATABASE "{name}"')
    try:
        url = f"postgresql://{s['USER']}:@/{name}?host={s['HOST']}"
        done = subprocess.run(
            [sys.executable, "manage.py", "import_corpus", str(corpus), "--library", "x"],
            env=child_env(DATABASE_URL=url),
            cwd=BASE_DIR,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        admin.close()
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert 'relation "ledger_library" does not exist' in last
    assert "the database is not migrated; run `make run` or `manage.py migrate`" in last
