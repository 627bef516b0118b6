#!/usr/bin/env bash
# old-primary-fenced: in the guest, primary.failed is kept and primary.fenced exists, upstream holds 8082, the
# replica's role is primary and nothing listens on 8081 (one SSH call).
. "$(dirname "$0")/failover.sh"
no_problem fence_problem || fail "the old primary is not durably fenced behind the promoted replica: $PROBLEM"
evidence --argjson old "$FAILED_PORT" --argjson promoted "$PROMOTED_PORT" \
  '{old_port: $old, old_primary: "fenced", promoted_port: $promoted}'
