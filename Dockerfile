# Écho — the bot in a slim image. The database lives in the /data volume; settings come from
# ECHO_* environment variables (compose.yaml) and, when mounted, /config/config.toml.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app

# The locked dependencies in their own layer: a change to the code does not reinstall them.
COPY requirements.lock ./
RUN pip install --require-hashes -r requirements.lock

COPY pyproject.toml README.md ./
COPY memory ./memory
COPY bot ./bot
RUN pip install --no-deps . \
    && useradd --system --uid 10001 --home /data echo \
    && mkdir -p /data /config && chown echo /data \
    && touch /config/config.toml

USER echo
VOLUME ["/data"]
# The database in the volume, the bot's heartbeat beside it. A mounted config.toml may set the
# rest; the environment wins over it. Secrets go in /run/secrets (discord__token).
ENV ECHO_STORAGE__PATH=/data/echo.sqlite3
# Healthy while the bot's event loop writes its heartbeat (every 30 s); unhealthy when the last
# beat is older than 120 s: the bot stopped, or its loop is stuck.
HEALTHCHECK --interval=60s --timeout=10s --start-period=60s --retries=2 \
    CMD ["python", "-m", "bot.heartbeat", "/data/echo.sqlite3.heartbeat"]
ENTRYPOINT ["echo-bot", "--config", "/config/config.toml"]
CMD ["run"]
