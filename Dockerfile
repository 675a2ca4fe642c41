# The sentinel image: one static binary FROM scratch, no base image, so it
# builds on a machine with no registry access. `make image` prepares the
# context (bin/image/) and tags sentinel:dev:
#
#   bin/image/sentinel        CGO_ENABLED=0 go build -trimpath ./cmd/sentinel
#                             (Mozilla's CA roots compiled in: x509roots/fallback)
#   bin/image/home/data/      an empty folder, mode 0700
#
# Written for the legacy builder too (no buildx): no `# syntax=`, no
# COPY --chmod, no RUN (scratch has no shell).
FROM scratch

# The binary stays root-owned: the node cannot rewrite it.
COPY sentinel /sentinel

# /data is the node's home: created here owned by the node's uid with mode
# 0700 (copied with its mode from the prepared folder), so a named volume
# mounted on it starts private. A volume mounted on a path missing from the
# image would be root-owned 0755, and the node refuses a home it cannot keep
# private.
COPY --chown=10001:10001 home/ /

USER 10001:10001
# Listening on every address beyond loopback needs TLS (tls_cert, tls_key)
# or an explicit AGENTPROTO_ALLOW_INSECURE_REMOTE=true: the image sets
# neither, the compose files choose.
ENV AGENTPROTO_HOME=/data \
    AGENTPROTO_LISTEN=0.0.0.0:7717 \
    AGENTPROTO_ALLOW_REMOTE=true
VOLUME ["/data"]
# 7717: the HTTP API, push ingress, MCP; 6222: cluster routes.
EXPOSE 7717 6222

# scratch has no curl: the binary GETs its own /readyz (exit 0 ready, 1 not).
HEALTHCHECK --interval=5s --timeout=4s --start-period=120s --retries=3 \
    CMD ["/sentinel", "health"]

ENTRYPOINT ["/sentinel"]
CMD ["serve"]
