#!/usr/bin/env bash
# service-restart: store a fresh record, restart builder-app.service in the guest,
# and the record must still read back. A fresh record per attempt keeps a retry
# fair to a builder that fixed its storage mid-match.
. "$(dirname "$0")/lib.sh"
record="record-$(hex 8)"
value="opaque-$(hex 16)"
put_record "$record" "$value" " before the restart"
output="$(guest systemctl restart builder-app.service 2>&1)"; code=$?
[ $code -eq 255 ] && arena_fault "SSH to the guest failed while restarting builder-app.service: $output"
[ $code -eq 0 ] || fail "systemctl restart builder-app.service failed in the guest: $(printf '%s' "$output" | tail -n 1)"
wait_for_health 20 " after systemctl restart builder-app.service"
expect_record "$record" "$value" " after systemctl restart builder-app.service"
evidence --arg record "$record" --arg value "$value" '{record: $record, restart: true, value: $value}'
