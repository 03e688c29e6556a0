# The advisory appliance: its single executable on a minimal base (glibc and libstdc++,
# no shell, no package manager). Build from the repository root:
#   docker build -f deploy/advisory.Dockerfile -t advisory .
# Mount the feed's public key(s) and the inventory read-only, and a volume on
# /var/lib/advisory for the state (decision log, accepted state, feed cache, outbox).

# --- build: the binary, on the Node 24 LTS from the registry's node-linux-<arch> package ---
# (the builder's architecture: x64 or arm64, the same as the runtime image's)
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY common/package.json common/
COPY scheduler/package.json scheduler/
COPY advisory/package.json advisory/
RUN npm ci --workspace advisory --ignore-scripts --no-audit --no-fund
COPY tsconfig.base.json ./
COPY common/src common/src
COPY advisory/src advisory/src
COPY advisory/scripts advisory/scripts
RUN npm run build:binary --workspace advisory && mkdir -p /out/state

# --- runtime ----------------------------------------------------------------------------
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /app/advisory/build/advisory /usr/local/bin/advisory
COPY --from=build --chown=nonroot:nonroot /out/state /var/lib/advisory
# Listening on every address of the container needs ADVISORY_DASHBOARD_USER and
# ADVISORY_DASHBOARD_PASSWORD (or ADVISORY_DASHBOARD_OPEN=true when the port is published
# to 127.0.0.1 only): the appliance refuses to serve the inventory openly by accident.
# With credentials it also needs ADVISORY_TLS_CERT and ADVISORY_TLS_KEY (mounted files),
# or ADVISORY_ALLOW_PLAIN_HTTP_AUTH=true when the port is published to 127.0.0.1 only
# behind a TLS reverse proxy: it refuses to take the password in clear by accident.
ENV ADVISORY_LISTEN=0.0.0.0:8090 ADVISORY_STATE_DIR=/var/lib/advisory
VOLUME /var/lib/advisory
EXPOSE 8090
# No HEALTHCHECK: the image has no shell or HTTP client; probe GET /health from outside
# (200 while a verified feed is in use, 503 otherwise).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/advisory"]
CMD ["run"]
