#!/usr/bin/env bash
# v2-restart: restart v2's slot in the guest; within 20 tries 0.5 s apart health, version v2 and the record
# written through v2 answer through the proxy again.
. "$(dirname "$0")/rollout.sh"
written_record
restart_units rollout-v2.service
poll_until 20 0.5 v2_record_problem "$RECORD" "$VALUE" \
  || fail "v2 or opaque record did not recover after service restart: $PROBLEM"
evidence --arg record "$RECORD" --arg value "$VALUE" '{record: $record, restart: true, value: $value}'
