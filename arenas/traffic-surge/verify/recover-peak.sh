#!/usr/bin/env bash
# recover-peak: 24 concurrent optional GETs (4 s each, ignored); 0.1 s later 4 sequential priority PUTs, each
# 204 within 2 s, then all 4 read back exactly (2 s each) while the peak is still on.
. "$(dirname "$0")/surge.sh"
ids=() values=()
for i in 1 2 3 4; do ids+=("peak-$i-$(hex 6)"); values+=("accepted-$i-$(hex 10)"); done
records="$(jq -cn --args '[$ARGS.positional as $a | range(4) | {id: $a[.], value: $a[. + 4]}]' "${ids[@]}" "${values[@]}")"
load "$(jq -cn --argjson records "$records" '{
  load: {count: 24, path: "/optional/peak-{i}", timeout: 4}, after: 0.1,
  requests: ([$records[] | {method: "PUT", path: "/priority/\(.id)", body: .value, timeout: 2, expect: [204]}]
           + [$records[] | {method: "GET", path: "/priority/\(.id)", timeout: 2}])}')"
for i in 0 1 2 3; do
  status="$(sent status $i)"
  [ "$status" = 204 ] || fail "peak priority PUT $((i + 1)) returned ${status:-000}"
done
for i in 0 1 2 3; do
  status="$(sent status $((i + 4)))"
  what="peak priority record $((i + 1)) was not read back: GET /priority/${ids[$i]}"
  [ "$status" != 000 ] || fail "$what: $(sent error $((i + 4)))"
  [ "$status" = 200 ] || fail "$what returned $status, expected 200"
  sent_body_is $((i + 4)) "${values[$i]}" || fail "$what returned body $(sent_body $((i + 4))) instead of '${values[$i]}'"
done
evidence --argjson records "$records" --argjson spread "$(spread)" --argjson connected "$(connected)" \
  '{peak_optional_pressure: 24, records: $records, recoverable: true, start_spread_ms: $spread,
  burst_connected_at_release: $connected}'
