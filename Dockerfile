# syntax=docker/dockerfile:1
# Build: TypeScript → dist/ with the dev dependencies.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Production dependencies only.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# Runtime: distroless Node 24, non-root, read-only root filesystem friendly (writes nothing).
# Only compiled output, production dependencies, package.json (ESM) and the CRDs (for `demo`).
FROM gcr.io/distroless/nodejs24-debian12:nonroot
LABEL org.opencontainers.image.title="signalr-autoscaler" \
      org.opencontainers.image.description="Kubernetes operator that autoscales Azure SignalR Service and Azure Web PubSub" \
      org.opencontainers.image.licenses="MIT"
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
COPY crds ./crds
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/nodejs/bin/node", "dist/cli/main.js"]
CMD ["run"]
