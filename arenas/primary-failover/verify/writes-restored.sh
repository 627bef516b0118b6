#!/usr/bin/env bash
# writes-restored: a fresh record PUT through the proxy is stored by the promoted primary (204 within 3 s) and
# reads back exactly. Later milestones reuse it.
. "$(dirname "$0")/failover.sh"
RECORD="post-failover-$(hex 8)"
VALUE="opaque-$(hex 12)"
HTTP_TIMEOUT=3
http PUT "/records/$RECORD" "$VALUE"; code=$?
[ $code -eq 0 ] || fail "$(curl_problem "PUT /records/$RECORD$VIA" $code)"
if [ "$HTTP_STATUS" != 204 ]; then
  why=""
  [ "$(body)" = read-only ] && why=": the replica behind the proxy is still read-only"
  fail "promoted primary PUT returned $HTTP_STATUS (PUT /records/$RECORD$VIA must answer 204)$why"
fi
no_problem get_problem "/records/$RECORD" "$VALUE" "$VIA after the PUT" || fail "$PROBLEM"
evidence --arg record "$RECORD" --arg value "$VALUE" '{record: $record, value: $value, writes: true}'
