#!/usr/bin/env bash
# records-kept: a record written twice reads back as its second value, and an id never written is 404.
#
# This arena's own check, on aoe's shared verifier helpers (verify/lib.sh of aoe, named by the referee
# in AOE_VERIFY_LIB so this folder works wherever it lives): `http`, `put_record`, `expect_record`,
# `fail` (the player's fault, stderr's last line is the detail), `arena_fault` (exit 3: never the
# player's), `hex`, `evidence`. The other milestones use aoe's own verify/service-up.sh and
# verify/host-reboot.sh: a verifier path is looked up in this folder first, then in aoe's verify/.
[ -f "${AOE_VERIFY_LIB:-}" ] || { echo "the referee named no verifier helpers (AOE_VERIFY_LIB)" >&2; exit 3; }
. "$AOE_VERIFY_LIB"

record="record-$(hex 8)"
first="first-$(hex 16)"
latest="latest-$(hex 16)"
put_record "$record" "$first" ""
put_record "$record" "$latest" " (writing it again)"
expect_record "$record" "$latest" " after writing it again"

unknown="never-$(hex 8)"
http GET "/records/$unknown"; code=$?
[ $code -eq 0 ] || fail "$(curl_problem "GET /records/$unknown" $code)"
[ "$HTTP_STATUS" = 404 ] || fail "GET /records/$unknown (never written) returned $HTTP_STATUS, expected 404"

evidence --arg record "$record" --arg value "$latest" '{record: $record, value: $value}'
