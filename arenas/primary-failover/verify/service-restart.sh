#!/usr/bin/env bash
# service-restart: restart the replica and the proxy together in the guest; within 20 tries 0.5 s apart the
# role is primary again and the post-failover record reads back, served by the arena's own units (a replica
# of the player's own under another unit collides with them on 8082).
. "$(dirname "$0")/failover.sh"
written_record
restart_units failover-replica.service failover-proxy.service
poll_until 20 0.5 record_problem "$RECORD" "$VALUE" \
  || fail "promoted topology did not survive service restart: $PROBLEM"
no_problem programs_problem || fail "after systemctl restart failover-replica.service failover-proxy.service, $PROBLEM"
evidence --arg record "$RECORD" --arg value "$VALUE" '{record: $record, restart: true, value: $value}'
