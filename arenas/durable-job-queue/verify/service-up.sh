#!/usr/bin/env bash
# service-up: one GET /health (3 s) answers 200 with body "ready". The worker is not checked here.
. "$(dirname "$0")/queue.sh"
HTTP_TIMEOUT=3 expect_health ""
evidence '{health: "ready"}'
