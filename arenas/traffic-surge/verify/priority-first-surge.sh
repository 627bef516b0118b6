#!/usr/bin/env bash
# priority-first-surge: 8 concurrent GET /optional/first-<i> (5 s each, their answers ignored); 0.1 s later a
# fresh priority PUT must answer 204 within 1.5 s and read back exactly within 1.5 s, while the surge is on (a
# burst the service dropped before the PUT was answered was no surge: see surge_cut).
. "$(dirname "$0")/surge.sh"
record="surge-$(hex 8)"
value="priority-$(hex 12)"
load "$(jq -cn --arg id "$record" --arg value "$value" '{
  load: {count: 8, path: "/optional/first-{i}", timeout: 5}, after: 0.1,
  requests: [{method: "PUT", path: "/priority/\($id)", body: $value, timeout: 1.5, expect: [204]},
             {method: "GET", path: "/priority/\($id)", timeout: 1.5}]}')"
status="$(answered 0)" || exit 1
[ "$status" = 204 ] || fail "priority PUT /priority/$record under the optional surge returned $status, expected 204"
cut="$(surge_cut 0)"
[ -z "$cut" ] || fail "the optional surge did not hold while priority PUT /priority/$record was answered: $cut"
status="$(answered 1)" || exit 1
[ "$status" = 200 ] || fail "priority GET /priority/$record under the optional surge returned $status, expected 200"
sent_body_is 1 "$value" \
  || fail "priority GET /priority/$record under the optional surge returned body $(sent_body 1) instead of '$value'"
evidence --arg record "$record" --arg value "$value" --argjson spread "$(spread)" --argjson connected "$(connected)" \
  '{optional_pressure: 8, record: $record, value: $value, start_spread_ms: $spread,
  burst_connected_at_release: $connected}'
