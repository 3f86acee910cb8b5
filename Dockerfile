# gridsched as a container: the `gridsched` command is the entrypoint.
#
#   docker build -t gridsched .
#   docker run --rm -p 28000:28000 gridsched serve --policy easy --socket 'tcp://*:28000'
#
# docker-compose.yml pairs it with real Batsim 4.x (see docs/guides/real-batsim.md).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/gridsched
# Only what the package build needs (see .dockerignore): metadata first, then the sources.
COPY pyproject.toml README.md ./
COPY schedulers ./schedulers
RUN pip install . \
    && useradd --create-home --uid 1000 gridsched

USER gridsched
WORKDIR /home/gridsched
# The scheduler's ZMQ REP socket (Batsim connects to it).
EXPOSE 28000
ENTRYPOINT ["gridsched"]
CMD ["serve", "--policy", "easy", "--socket", "tcp://*:28000"]
