# Credence: one process, one SQLite file in /data.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    CREDENCE_DATA_DIR=/data \
    CREDENCE_HOST=0.0.0.0 \
    CREDENCE_PORT=8000

WORKDIR /app
COPY pyproject.toml setup.py MANIFEST.in README.md ./
COPY server ./server
COPY pwa ./pwa
COPY examples/demo.json examples/reflection.json ./examples/
RUN pip install --no-compile . \
    && useradd --system --uid 10001 --home-dir /data credence \
    && mkdir -p /data && chown credence /data

USER credence
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(f\"http://127.0.0.1:{os.environ.get('CREDENCE_PORT', '8000')}/healthz\", timeout=4)"]
CMD ["credence", "serve", "--host", "0.0.0.0"]
