#!/usr/bin/env bash
# baseline-ready: the live v1 answers through the public proxy (2 s each; any status but 200 fails): health
# ready, version v1 and both original records. Its pass starts the referee's continuity monitor.
. "$(dirname "$0")/rollout.sh"
no_problem serving_problem v1 || fail "the live v1 baseline is not serving: $PROBLEM"
evidence --argjson ids "$(printf '%s\n' "${ORIGINAL_IDS[@]}" | jq -R . | jq -sc .)" \
  '{baseline: true, records: $ids, version: "v1"}'
