#!/usr/bin/env bash
# baseline-ready: GET /health answers 200 "ready" and the three historical records read back exactly (2 s each).
. "$(dirname "$0")/surge.sh"
no_problem health_problem || fail "$PROBLEM"
no_problem history_problem || fail "$PROBLEM"
evidence '{health: "ready", historical_records: 3}'
