# Écho — the bot in a slim image. The database lives in the /data volume; mount config.toml.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

COPY pyproject.toml README.md ./
COPY memory ./memory
COPY bot ./bot
RUN pip install . && useradd --system --uid 10001 --home /data echo \
    && mkdir -p /data && chown echo /data

USER echo
VOLUME ["/data"]
# The config file sets [storage] path = "/data/echo.sqlite3"; secrets go in /run/secrets.
ENTRYPOINT ["echo-bot", "--config", "/config/config.toml"]
CMD ["run"]
