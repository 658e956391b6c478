# pathd container: build with the same `make deps` and `make` CI runs, then
# ship only the binaries and their runtime libraries.

FROM debian:bookworm AS build
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends make gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make deps && make -j"$(nproc)"

FROM debian:bookworm-slim AS runtime
RUN apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends libmicrohttpd12 libcjson1 libuv1 libnettle8 libhiredis0.14 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/pathd --create-home pathd \
    && install -d -o pathd -g pathd /var/lib/pathd/maps
COPY --from=build /src/build/pathd /src/build/pathd-bench /usr/local/bin/
USER pathd
WORKDIR /var/lib/pathd
# Maps persist in the volume (--data-dir): a restarted container keeps them.
# A fleet sets PATHD_DATA_DIR="" and PATHD_STORE=redis://... (deploy/k8s).
ENV PATHD_BIND=0.0.0.0 PATHD_PORT=8080 PATHD_DATA_DIR=/var/lib/pathd/maps
VOLUME /var/lib/pathd/maps
EXPOSE 8080
# bash's /dev/tcp keeps the runtime image free of an HTTP client.
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
    CMD bash -c 'exec 3<>/dev/tcp/127.0.0.1/8080 && printf "GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n" >&3 && head -n1 <&3 | grep -q " 200 "'
ENTRYPOINT ["/usr/local/bin/pathd"]
