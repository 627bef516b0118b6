#!/usr/bin/env bash
# uninterrupted-cutover, after the referee judged its continuity monitor (v2 seen, no failed public check):
# 10 /version probes 100 ms apart all answer v2, then in the guest (one SSH call each) upstream holds 8082 and
# v1, v2 and the proxy are all active (v2 in its slot, v1 and the proxy never stopped).
. "$(dirname "$0")/rollout.sh"
for try in $(seq 10); do
  no_problem get_problem /version v2 "$VIA" || fail "public endpoint did not remain on v2: $PROBLEM"
  [ "$try" -eq 10 ] || sleep 0.1
done
expect_guest_file "$STATE/upstream" "$V2_PORT" " (the proxy must read v2's port)"
expect_units_active "${UNITS[@]}"
evidence --argjson port "$V2_PORT" '{cutover: true, upstream: $port, version: "v2"}'
