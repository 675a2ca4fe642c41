#!/usr/bin/env bash
# Bring a compose project up and wait until every service is healthy, or
# take it down. Works with the docker compose plugin (v2) and the
# standalone docker-compose 1.29 (v1: no `up --wait`, and recreating a
# container can fail on recent engines, so `up` always brings the project
# down first).
#
#   deploy/compose.sh up   [-f file ...] [-p project]   # down, up -d, wait for health
#   deploy/compose.sh down [-f file ...] [-p project]   # down -v (volumes too)
#
# SENTINEL_WAIT (seconds, default 180) bounds the wait.
set -euo pipefail

if docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
elif command -v docker-compose >/dev/null 2>&1; then
  compose=(docker-compose)
else
  echo "compose.sh: neither 'docker compose' nor 'docker-compose' is installed" >&2
  exit 1
fi

verb="${1:-}"; shift || true
args=("$@")

case "$verb" in
  down)
    # down reads the file, so the required variables must be set; their
    # values do not matter to it.
    SENTINEL_TOKEN="${SENTINEL_TOKEN:-unused-by-down}" \
    SENTINEL_CLUSTER_TOKEN="${SENTINEL_CLUSTER_TOKEN:-unused-by-down}" \
    SENTINEL_NATS_PASSWORD="${SENTINEL_NATS_PASSWORD:-unused-by-down}" \
      "${compose[@]}" "${args[@]}" down -v --remove-orphans
    ;;
  up)
    "${compose[@]}" "${args[@]}" down --remove-orphans >/dev/null 2>&1 || true
    "${compose[@]}" "${args[@]}" up -d
    deadline=$(( $(date +%s) + ${SENTINEL_WAIT:-180} ))
    while :; do
      ids=$("${compose[@]}" "${args[@]}" ps -q)
      total=0; healthy=0; report=""
      for id in $ids; do
        total=$((total + 1))
        line=$(docker inspect --format '{{.Name}} {{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$id")
        report="$report ${line#/}"
        case "$line" in *" healthy") healthy=$((healthy + 1)) ;; esac
      done
      if [ "$total" -gt 0 ] && [ "$healthy" -eq "$total" ]; then
        echo "compose.sh: all $total services healthy:$report"
        exit 0
      fi
      if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "compose.sh: not healthy after ${SENTINEL_WAIT:-180}s:$report" >&2
        "${compose[@]}" "${args[@]}" logs --tail 30 >&2 || true
        exit 1
      fi
      sleep 2
    done
    ;;
  *)
    echo "usage: deploy/compose.sh up|down [compose options]" >&2
    exit 2
    ;;
esac
