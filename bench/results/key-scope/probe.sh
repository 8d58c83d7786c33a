#!/bin/bash
# The eighth pass's cross-key probe (red-team.md, "Prefix sharing scoped per gateway key"), against a running
# `npm run dev -- --port 28747` whose .dev.vars has two keys, pgw-k1-local-0001 and pgw-k2-local-0002.
#   probe.sh KEY COMPANY [TENANT]
# sends the "Confidential: the merger of Acme and COMPANY ..." system prompt (about 144 tokens) as KEY, under
# prompt_cache_key TENANT if given, and prints the backend, the route headers and the engine's cached_tokens.
set -euo pipefail
words=$(for i in $(seq 1 60); do printf "word%d " "$i"; done)
sys="Confidential: the merger of Acme and $2 closes on 14 March at 41 dollars per share. $words"
extra=""
if [ -n "${3:-}" ]; then extra=",\"prompt_cache_key\":\"$3\""; fi
body="{\"model\":\"llama-3.1-8b-instruct\",\"max_tokens\":4,\"messages\":[{\"role\":\"system\",\"content\":\"$sys\"},{\"role\":\"user\",\"content\":\"q $RANDOM\"}]$extra}"
h=$(mktemp) b=$(mktemp)
curl -s -D "$h" -o "$b" "http://127.0.0.1:${PORT:-28747}/v1/chat/completions" \
  -H "Authorization: Bearer $1" -H 'content-type: application/json' -d "$body"
header() { grep -i "^$1:" "$h" | cut -d' ' -f2 | tr -d '\r'; }
cached=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["usage"].get("prompt_tokens_details",{}).get("cached_tokens"))' "$b")
echo "$1 $2 tenant=${3:-} backend=$(header x-prefix-gateway-backend): route=$(header x-prefix-gateway-route)" \
  "expected=$(header x-prefix-gateway-cached-tokens-expected) cached_tokens=$cached"
rm -f "$h" "$b"
