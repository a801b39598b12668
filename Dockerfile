# syntax=docker/dockerfile:1
# Build stage: compile TypeScript with the dev dependencies.
FROM node:26-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/resource/package.json ./packages/resource/
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
# The server imports the access token's contract from the @linkauth/resource workspace: built first.
COPY packages/resource/tsconfig.build.json ./packages/resource/
COPY packages/resource/src ./packages/resource/src
COPY src ./src
COPY migrations ./migrations
RUN npm run build

# Run stage: production dependencies and the compiled code only, as the unprivileged `node` user.
# The public listener on every interface of the container; the admin API stays on the container's
# loopback (ADMIN_HOST's default), so publishing ports never exposes it. Reach it with the CLI inside
# the container (`docker exec <container> linkauth …`), or opt in with ADMIN_HOST=0.0.0.0 and a port
# published on the host's loopback only (docker-compose.yml does).
FROM node:26-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    ADMIN_PORT=3001 \
    DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/resource/package.json ./packages/resource/
# argon2 ships prebuilt binaries inside its package, so no install scripts are needed.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/packages/resource/dist ./packages/resource/dist
COPY bin ./bin
# The `linkauth` command the start-up hint names, on PATH.
RUN ln -s /app/bin/linkauth.js /usr/local/bin/linkauth && mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/src/main.js"]
