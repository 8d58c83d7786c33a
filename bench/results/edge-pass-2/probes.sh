#!/usr/bin/env bash
# The curl probes of bench/results/edge-pass-2.md, against a gateway started as:
#   npm run dev -- --no-wrangler                         # the 4 emulators on :8101-8104
#   node bench/results/edge-pass-2/fault-backend.mjs 8201
#   node bench/results/edge-pass-2/make-vars.mjs > /tmp/ep2/vars-fault
#   wrangler dev --port 8787 --ip 127.0.0.1 --env-file /tmp/ep2/vars-fault
# Usage: probes.sh answers|shapes|admin   (each request bounded by curl -m)
mkdir -p /tmp/ep2
G=http://127.0.0.1:8787; K='Authorization: Bearer pgw-local-dev-key'; J='content-type: application/json'
A='Authorization: Bearer pgw-local-admin-token'; M=llama-3.1-8b-instruct
p(){ n=$1; shift; echo "=== $n"; curl -sS -m ${T:-15} -D /tmp/ep2/hdr -o /tmp/ep2/body -w '%{http_code} ct=%{content_type} t=%{time_total}\n' "$@"
  grep -i -E '^(x-prefix-gateway-backend|x-prefix-gateway-route|retry-after):' /tmp/ep2/hdr | tr -d '\r' | tr '\n' ' '; echo; head -c ${B:-400} /tmp/ep2/body; echo; }
chat(){ echo "{\"model\":\"$1\",\"max_tokens\":4,${3:+\"stream\":true,}\"messages\":[{\"role\":\"user\",\"content\":\"$2\"}]}"; }
case "$1" in
answers)
  # one backend per pool: what the client gets
  for m in e400 e404 e413 e422 e500 e503ra e504 empty200 err200 sseerr; do p solo-$m $G/v1/chat/completions -H "$K" -H "$J" -d "$(chat solo-$m hello)"; p solo-$m-stream $G/v1/chat/completions -H "$K" -H "$J" -d "$(chat solo-$m hello 1)"; done
  # two backends per pool (the fault and a good one): retried or not, health after
  for m in e400 e404 e422 e500 e503ra e504; do for i in 1 2 3 4 5 6; do curl -s -m 15 -o /dev/null -w "%{http_code}," $G/v1/chat/completions -H "$K" -H "$J" -d "$(chat m-$m "prompt number $i for $m")"; done; echo " m-$m"; done
  for i in 1 2 3 4 5 6; do curl -s -m 15 -o /dev/null -w "%{http_code}," $G/v1/chat/completions -H "$K" -H "$J" -d "$(chat m2-empty200 "prompt $i")"; done; echo " m2-empty200"
  curl -s 127.0.0.1:8201/counts; echo; node "$(dirname "$0")/stats.mjs"
  # deadlines (each waits out one)
  T=25 p noheaders-stream $G/v1/chat/completions -H "$K" -H "$J" -d "$(chat solo-noheaders hello 1)"
  T=25 p noheaders-nonstream $G/v1/chat/completions -H "$K" -H "$J" -d "$(chat solo-noheaders hello)"
  T=25 p stall-stream $G/v1/chat/completions -H "$K" -H "$J" -d "$(chat solo-stall hello 1)"
  T=25 p stall-nonstream $G/v1/chat/completions -H "$K" -H "$J" -d "$(chat solo-stall hello)"
  T=90 p hdronly-nonstream $G/v1/chat/completions -H "$K" -H "$J" -d "$(chat solo-hdronly hello)";;
shapes)
  C=$G/v1/completions; CH=$G/v1/chat/completions
  p prompt-arr-str $C -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":3,\"prompt\":[\"first prompt about cats\",\"second prompt about dogs\"]}"
  p prompt-tokids $C -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":3,\"prompt\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]}"
  p prompt-tokid-arrs $C -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":3,\"prompt\":[[1,2,3],[4,5,6]]}"
  p prompt-mixed $C -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":3,\"prompt\":[\"a\",[1,2]]}"
  p prompt-neg-tok $C -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":3,\"prompt\":[-1,1.5]}"
  p prompt-empty-arr $C -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":3,\"prompt\":[]}"
  p echo-logprobs $C -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":3,\"prompt\":\"hi\",\"echo\":true,\"logprobs\":5}"
  p n3-stream $CH -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":3,\"n\":3,\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"
  p tools $CH -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":3,\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\"}}}],\"tool_choice\":\"auto\",\"messages\":[{\"role\":\"user\",\"content\":\"weather?\"}]}"
  p logprobs $CH -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":3,\"logprobs\":true,\"top_logprobs\":20,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"
  p stop65 $CH -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":3,\"stop\":$(node -e 'console.log(JSON.stringify(Array.from({length:65},(_,i)=>"s"+i)))'),\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"
  p respfmt $CH -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":3,\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"schema\":{\"type\":\"object\"}}},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"
  p so-nonstream $CH -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":3,\"stream_options\":{\"include_usage\":true},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"
  node -e 'const o={};for(let i=0;i<200000;i++)o[i]=-100;require("fs").writeFileSync("/tmp/ep2/lb.json",JSON.stringify({model:"llama-3.1-8b-instruct",max_tokens:3,logit_bias:o,messages:[{role:"user",content:"hi"}]}))'
  p logit-bias-200k $CH -H "$K" -H "$J" --data-binary @/tmp/ep2/lb.json
  p user-meta $CH -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":3,\"user\":\"u-1\",\"metadata\":{\"a\":\"b\"},\"store\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"
  # spread: 8 distinct token-id prompts, the same as batches, 8 distinct string batches; 8 tenants on one prompt
  for kind in ids idarrs strs; do echo -n "$kind: "; for i in $(seq 1 8); do case $kind in
    ids) pr=$(node -e "console.log(JSON.stringify(Array.from({length:40},(_,j)=>($i*1000+j*7)%100000)))");;
    idarrs) pr=$(node -e "console.log(JSON.stringify([Array.from({length:40},(_,j)=>($i*1000+j*7)%100000),[1,2,3]]))");;
    strs) pr="[\"distinct prompt number $i about topic $((i*37)) with enough words to fill more than one block of sixteen tokens for sure, yes\",\"b\"]";; esac
    curl -s -m 10 -D /tmp/ep2/hdr -o /dev/null $C -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":2,\"prompt\":$pr}"; grep -i x-prefix-gateway-backend /tmp/ep2/hdr | tr -d '\r' | awk '{printf "%s ", $2}'; done; echo; done
  SYS=$(printf 'shared system prompt words %.0s' $(seq 1 50))
  echo -n "tenants: "; for t in a b c d e f g h; do curl -s -m 10 -D /tmp/ep2/hdr -o /dev/null $CH -H "$K" -H "$J" -d "{\"model\":\"$M\",\"max_tokens\":2,\"prompt_cache_key\":\"tenant-$t\",\"messages\":[{\"role\":\"system\",\"content\":\"$SYS\"},{\"role\":\"user\",\"content\":\"hi\"}]}"; grep -i x-prefix-gateway-backend /tmp/ep2/hdr | tr -d '\r' | awk '{printf "%s ", $2}'; done; echo;;
admin)
  B=160
  for path in /admin/stats /admin/backends /metrics /admin/dashboard /healthz; do for h in "" "$K" "Authorization: Bearer pgw-local-admin-tokex" "Authorization: Bearer pgw-local-admin-token "; do
    echo -n "$path [$h]: "; curl -sS -m 10 -o /tmp/ep2/body -w '%{http_code} ' ${h:+-H "$h"} $G$path; head -c $B /tmp/ep2/body; echo; done; done
  for path in "/admin/stats/" "/admin//stats" "/ADMIN/stats" "/admin/stats?token=pgw-local-admin-token" "/admin/%73tats" "/admin/./stats" "/v1/../admin/stats" "/metrics/" "/admin/backends/emu-1/drain" "/admin/pools/$M/reset-affinity" "/admin/backends/..%2F..%2Fadmin/drain"; do for m in GET POST; do
    echo -n "$m $path [inference key]: "; curl -sS -m 10 -o /tmp/ep2/body -w '%{http_code} ' -X $m -H "$K" "$G$path"; head -c 120 /tmp/ep2/body; echo; done; done
  curl -sS -m 10 -D - -o /tmp/ep2/dash.html $G/admin/dashboard | grep -i -E 'content-security|cache-control|referrer|x-content'
  # leaks: backend ports and keys in any admin answer
  curl -s -m 10 -H "$A" $G/admin/stats $G/admin/backends $G/metrics $G/healthz | grep -c -E '8201|810[1-4]|emu-key|fault-backend-key';;
esac
