#!/usr/bin/env bash
# service-up: GET /health answers 200 with body "ready".
. "$(dirname "$0")/lib.sh"
expect_health ""
evidence '{health: "ready"}'
