# pathd container: build with the same `make deps` and `make` CI runs, then
# ship only the binaries and their runtime libraries.

FROM debian:bookworm AS build
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends make gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# .git stays out of the image: pass the commit for pathd_build_info
# (/metrics) with `docker build --build-arg BUILD_COMMIT=$(git rev-parse --short=12 HEAD) .`
ARG BUILD_COMMIT=unknown
RUN make deps && make -j"$(nproc)" BUILD_COMMIT="$BUILD_COMMIT"

FROM debian:bookworm-slim AS runtime
RUN apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends libmicrohttpd12 libcjson1 libuv1 libnettle8 libhiredis0.14 \
       librecast1 libstdc++6 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/pathd --create-home pathd \
    && install -d -o pathd -g pathd /var/lib/pathd/maps
COPY --from=build /src/build/pathd /src/build/pathd-bench /usr/local/bin/
USER pathd
WORKDIR /var/lib/pathd
# Maps persist in the volume (--data-dir): a restarted container keeps them.
# The directory belongs to pathd (uid 10001, gid 10001), and the volume must
# stay writable by that uid: a new named volume is (Docker copies this
# directory, owner included, into it); a bind mount needs
# `chown 10001:10001 DIR` on the host first, else every upload answers 500
# storage_failed.
# A fleet sets PATHD_DATA_DIR="" and PATHD_STORE=redis://... (deploy/k8s).
#
# Tokens. The container listens on 0.0.0.0, which pathd refuses without
# bearer tokens. Give it a token file, one "<scope> <token>" a line (scope
# read or write; see README.md, "Tokens"), never the tokens themselves in an
# environment variable or on the command line, where `docker inspect` and
# `ps` show them:
#   - a mounted file:
#       docker run -v /etc/pathd/tokens:/run/secrets/pathd_tokens:ro -p 8080:8080 pathd
#   - a Docker/Compose/Swarm secret named pathd_tokens (Compose:
#     `secrets: [pathd_tokens]` with `file: ./tokens`), or a Kubernetes
#     Secret mounted as a volume at /run/secrets (key pathd_tokens).
# Both land at PATHD_AUTH_TOKEN_FILE below; when nothing is there pathd
# says so and exits. `docker kill -s HUP <container>` reloads the file (a
# Kubernetes Secret update is picked up at the next SIGHUP). For a private
# network where anyone who can reach the port may do anything, start with
# -e PATHD_INSECURE_NO_AUTH=1 -e PATHD_AUTH_TOKEN_FILE= instead (both at
# once is refused as a contradiction); the start-up line then says so.
#
# TLS: mount a certificate and key and set PATHD_TLS_CERT and PATHD_TLS_KEY
# (e.g. -v /etc/pathd/tls:/run/secrets/tls:ro -e
# PATHD_TLS_CERT=/run/secrets/tls/cert.pem -e
# PATHD_TLS_KEY=/run/secrets/tls/key.pem). The HEALTHCHECK below speaks
# plain HTTP to the probe listener, which TLS does not cover; if you turn
# that listener off (PATHD_HEALTH_PORT=-1) with TLS on, replace the check
# (docker run --no-healthcheck, or the orchestrator's probe of
# https://.../healthz).
ENV PATHD_BIND=0.0.0.0 PATHD_PORT=8080 PATHD_HEALTH_PORT=8081 \
    PATHD_DATA_DIR=/var/lib/pathd/maps \
    PATHD_DRAIN_TIMEOUT=30 PATHD_AUTH_TOKEN_FILE=/run/secrets/pathd_tokens
VOLUME /var/lib/pathd/maps
EXPOSE 8080
# Health: GET /healthz on the probe listener (PATHD_HEALTH_PORT, 8081: plain
# HTTP with connections of its own, so the check stays true while slow
# clients hold every connection of the API port, and with TLS on the API
# port), or on PATHD_PORT when the probe listener is off
# (-e PATHD_HEALTH_PORT=-1), through bash's /dev/tcp, which keeps the
# runtime image free of an HTTP client. tests/dockerfile.sh runs this
# command against a real pathd in make test.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD bash -c 'h=127.0.0.1; [ -n "$PATHD_BIND" ] && [ "$PATHD_BIND" != 0.0.0.0 ] && h=$PATHD_BIND; p=${PATHD_PORT:-8080}; [ -n "$PATHD_HEALTH_PORT" ] && [ "$PATHD_HEALTH_PORT" != -1 ] && p=$PATHD_HEALTH_PORT; exec 3<>"/dev/tcp/$h/$p" && printf "GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n" >&3 && head -n1 <&3 | grep -q " 200 "'
# Stopping: SIGTERM makes pathd stop accepting, finish the requests in
# flight for up to PATHD_DRAIN_TIMEOUT seconds, and exit 0. Docker kills a
# container 10 s after the signal unless told otherwise, so give it at
# least the drain timeout plus a margin:
#   docker run --stop-timeout 40 ...   (Compose: stop_grace_period: 40s;
#   Kubernetes: terminationGracePeriodSeconds: 40)
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/pathd"]
