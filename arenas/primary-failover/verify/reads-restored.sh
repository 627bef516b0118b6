#!/usr/bin/env bash
# reads-restored: through the public proxy (2 s each; any status but 200 fails) health is ready, the role is
# primary and the three original records read back exactly.
. "$(dirname "$0")/failover.sh"
no_problem reads_problem || fail "existing reads are not restored through a promoted primary: $PROBLEM"
evidence --argjson ids "$(printf '%s\n' "${ORIGINAL_IDS[@]}" | jq -R . | jq -sc .)" \
  '{reads: true, records: $ids, role: "primary"}'
