#!/usr/bin/env bash
# restart-under-load: while 30 sequential optional GETs (1 s each) run in the background, restart
# traffic-surge.service in the guest; health must come back (up to 20 probes 0.25 s apart), then a fresh
# priority PUT answers 204 within 2 s and reads back exactly.
. "$(dirname "$0")/surge.sh"
record="restart-$(hex 8)"
value="durable-$(hex 12)"
load '{"load": {"count": 30, "path": "/optional/restart-{i}", "timeout": 1, "mode": "stream"}, "wait_for_load": true}' &
stream=$!
sleep 0.1
restart_units traffic-surge.service
healthy=""
for try in $(seq 20); do
  HTTP_TIMEOUT=1 http GET /health && [ "$HTTP_STATUS" = 200 ] && [ "$(body)" = ready ] && { healthy=1; break; }
  sleep 0.25
done
[ -n "$healthy" ] || { no_problem health_problem
  fail "after systemctl restart traffic-surge.service under load: ${PROBLEM:-GET /health did not answer 200 ready}"; }
HTTP_TIMEOUT=2 http PUT "/priority/$record" "$value"; code=$?
[ $code -eq 0 ] || fail "$(curl_problem "PUT /priority/$record after the restart under load" $code)"
[ "$HTTP_STATUS" = 204 ] || fail "PUT /priority/$record after the restart under load returned $HTTP_STATUS, expected 204"
HTTP_TIMEOUT=2 no_problem get_problem "/priority/$record" "$value" " after the restart under load" || fail "$PROBLEM"
kill "$stream" 2>/dev/null
evidence --arg record "$record" --arg value "$value" '{record: $record, restart_under_load: true, value: $value}'
