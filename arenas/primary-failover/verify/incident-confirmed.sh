#!/usr/bin/env bash
# failed-primary-preserved (the original's incident-confirmed check): the failed primary's marker is still
# there and nothing listens on its port 8081 (one SSH call). Passes at the first tick unless a player hurried
# to "repair" the old primary.
. "$(dirname "$0")/failover.sh"
preserved_problem() {
  guest_snapshot "$STATE/primary.failed" || return 1
  snapshot_present_problem "$STATE/primary.failed" " (the failed primary's marker must be kept)" || return 1
  snapshot_port_problem "$FAILED_PORT" " (the failed primary must stay down)"
}
no_problem preserved_problem || fail "the failed primary is not preserved: $PROBLEM"
evidence --argjson port "$FAILED_PORT" '{failed_primary: $port, listening: false, preserved: true}'
