# The scheduler API and the staff app it serves at /app/. Build from the repository root:
#   docker build -f deploy/scheduler.Dockerfile -t scheduler .
# Runs as the unprivileged `node` user, writes only to /data (the embedded database when
# DATABASE_URL is unset), so it runs with a read-only root file system (--read-only with
# a tmpfs on /tmp).

# --- build: every dependency, the compiled bundle, the built staff app -------------------
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY common/package.json common/
COPY scheduler/package.json scheduler/
COPY advisory/package.json advisory/
COPY web/package.json web/
RUN npm ci --workspace scheduler --workspace web --ignore-scripts --no-audit --no-fund
COPY tsconfig.base.json ./
COPY common/src common/src
COPY scheduler/src scheduler/src
RUN npm run build --workspace scheduler
COPY web/index.html web/vite.config.ts web/
COPY web/src web/src
COPY web/public web/public
RUN npm run build --workspace web

# --- runtime: production dependencies and the bundle, nothing else ----------------------
FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
COPY common/package.json common/
COPY scheduler/package.json scheduler/
COPY advisory/package.json advisory/
COPY web/package.json web/
RUN npm ci --workspace scheduler --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm cache clean --force \
  && mkdir -p /data && chown node:node /data
COPY --from=build /app/scheduler/dist scheduler/dist
# The server finds the app as the nearest web/dist above its bundle.
COPY --from=build /app/web/dist web/dist
USER node
VOLUME /data
EXPOSE 8080
# Asks the address the server listens on (a wildcard address means this machine).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "const h = process.env.HOST || '127.0.0.1'; const host = h === '0.0.0.0' ? '127.0.0.1' : h === '::' ? '[::1]' : h.includes(':') ? '[' + h + ']' : h; fetch('http://' + host + ':' + process.env.PORT + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Migrations run at start; SIGTERM finishes in-flight requests within 10 s.
STOPSIGNAL SIGTERM
CMD ["node", "scheduler/dist/main.mjs"]
