#!/usr/bin/env bash
# write-read: PUT an opaque value under a fresh record id, GET must return exactly those bytes.
. "$(dirname "$0")/lib.sh"
record="record-$(hex 8)"
value="opaque-$(hex 16)"
put_record "$record" "$value" ""
expect_record "$record" "$value" " right after the PUT"
evidence --arg record "$record" --arg value "$value" '{record: $record, value: $value}'
