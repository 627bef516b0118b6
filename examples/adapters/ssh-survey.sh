#!/usr/bin/env bash
# A minimal external adapter for aoe_tui (the protocol: docs/adapters.md).
#
# It does a trivial job over SSH — looks at the host and the service slot —
# and writes everything an adapter owes the referee: one live tool-trace line
# per call, a cumulative usage.json after each call, and result.json at the end
# (or on SIGTERM, with status "interrupted"). Install it as
# `aoe-adapter-ssh-survey` on PATH and use `adapter = "ssh-survey"` in a manifest.
# Needs: bash, ssh, jq, GNU date.
set -uo pipefail

for name in AOE_AGENT_ID AOE_TERRITORY_ID AOE_TERRITORY_HOST AOE_SSH_PORT AOE_SSH_KEY AOE_KNOWN_HOSTS \
            AOE_RESULT_FILE AOE_USAGE_FILE; do
  [ -n "${!name:-}" ] || { echo "ssh-survey: $name is not set" >&2; exit 2; }
done
TRACE="${AOE_TOOL_TRACE_FILE:-$(dirname "$AOE_RESULT_FILE")/tool_trace.jsonl}"
STARTED_MS=$(date +%s%3N)
CALLS=0

elapsed_ms() { echo $(( $(date +%s%3N) - STARTED_MS )); }

# write_json FILE JQ-ARGS... : readers poll these files, so replace them atomically.
write_json() {
  local file="$1"; shift
  jq -n "$@" >"$file.tmp.$$" && mv -f "$file.tmp.$$" "$file"
}

write_usage() {
  write_json "$AOE_USAGE_FILE" --arg agent "$AOE_AGENT_ID" --argjson calls "$CALLS" \
    '{schema_version: 1, agent: $agent, resource_units: $calls, input_tokens: null, output_tokens: null,
      cost_microusd: null, tool_calls: $calls}'
}

# finish STATUS SUMMARY : the last file written; its presence means the run is over.
finish() {
  write_usage
  write_json "$AOE_RESULT_FILE" --arg agent "$AOE_AGENT_ID" --arg territory "$AOE_TERRITORY_ID" \
    --arg status "$1" --arg summary "$2" --argjson calls "$CALLS" \
    '{schema_version: 1, agent: $agent, territory: $territory, status: $status, summary: $summary,
      usage: {resource_units: $calls, tool_calls: $calls}, transcript: null}'
  exit 0
}
trap 'finish interrupted "stopped by the controller"' TERM INT

# guest DESCRIPTION COMMAND : run COMMAND in the guest and append its tool-trace entry.
guest() {
  local started output status
  started=$(elapsed_ms)
  output="$(ssh -q -i "$AOE_SSH_KEY" -o UserKnownHostsFile="$AOE_KNOWN_HOSTS" -o StrictHostKeyChecking=yes \
    -o BatchMode=yes -o ConnectTimeout=10 -p "$AOE_SSH_PORT" "${AOE_SSH_USER:-root}@$AOE_TERRITORY_HOST" "$2" 2>&1)"
  status=$?
  CALLS=$((CALLS + 1))
  jq -cn --arg id "call-$CALLS" --arg command "$2" --arg description "$1" --arg output "$output" \
    --argjson is_error "$([ $status -eq 0 ] && echo false || echo true)" \
    --argjson started "$started" --argjson duration "$(( $(elapsed_ms) - started ))" \
    '{id: $id, name: "Bash", input: {command: $command, description: $description}, output: $output,
      is_error: $is_error, started_after_ms: $started, duration_ms: $duration}' >>"$TRACE"
  write_usage
  [ $status -ne 255 ] || finish interrupted "SSH to $AOE_TERRITORY_HOST:$AOE_SSH_PORT failed: $output"
  return $status
}

guest "Identify the host" "uname -sr && . /etc/os-release && echo \$PRETTY_NAME" \
  || finish failed "could not identify the host"
guest "Inspect the service slot" "systemctl is-enabled builder-app.service; ls /opt/builder" \
  || finish failed "builder-app.service is not enabled"
finish completed "surveyed the host; building the service is left to a real agent"
