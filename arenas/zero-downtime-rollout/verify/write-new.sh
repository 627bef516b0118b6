#!/usr/bin/env bash
# write-new: a fresh record PUT through the proxy is stored by v2 (204 within 3 s) and reads back exactly.
# Later milestones reuse it.
. "$(dirname "$0")/rollout.sh"
RECORD="rollout-$(hex 8)"
VALUE="opaque-$(hex 12)"
HTTP_TIMEOUT=3
http PUT "/records/$RECORD" "$VALUE"; code=$?
[ $code -eq 0 ] || fail "$(curl_problem "PUT /records/$RECORD$VIA" $code)"
[ "$HTTP_STATUS" = 204 ] || fail "v2 PUT returned $HTTP_STATUS (PUT /records/$RECORD$VIA must answer 204)"
no_problem get_problem "/records/$RECORD" "$VALUE" "$VIA after the PUT" || fail "v2 write/read mismatch: $PROBLEM"
evidence --arg record "$RECORD" --arg value "$VALUE" '{record: $record, value: $value, version: "v2"}'
