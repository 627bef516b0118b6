#!/usr/bin/env bash
# recover-accepted: the three jobs accepted before the player arrived each come back completed exactly
# once, with their original id and payload (up to 30 tries 1 s apart).
. "$(dirname "$0")/queue.sh"
poll_until 30 1 backlog_problem \
  || fail "pre-existing accepted jobs were not recovered exactly once: $PROBLEM"
evidence --argjson ids "$(printf '%s\n' "${ACCEPTED_IDS[@]}" | jq -R . | jq -sc .)" \
  '{accepted_jobs: $ids, recovered: true}'
