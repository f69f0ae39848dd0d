#!/usr/bin/env bash
# Starts the system the way the README's quick start does (embedded Postgres, in-process
# limiter) in a scratch data folder, waits for the printed key, and calls GET /api/v1/me with it.
set -euo pipefail
cd "$(dirname "$0")/.."
data=$(mktemp -d)
log="$data/start.log"
# Ports the system picks for itself are free ones (fixed ports collide on a busy CI machine),
# below the ephemeral range (free-ports.js says why); SMOKE_PORT still pins the gateway's. npm
# start refuses a port taken in between, loudly.
read -r picked auth billing library transcription conversion app < <(node .ci/free-ports.js 7)
port=${SMOKE_PORT:-$picked}
export MURMUR_DATA_DIR="$data/store" PORT="$port"
export AUTH_ADDR=127.0.0.1:$auth BILLING_ADDR=127.0.0.1:$billing LIBRARY_ADDR=127.0.0.1:$library
export TRANSCRIPTION_ADDR=127.0.0.1:$transcription CONVERSION_ADDR=127.0.0.1:$conversion
export APP_PORT=$app
echo "smoke: gateway on port $port"
# Its own process group, so the whole tree (npm, launcher, six services) stops together.
: >"$log"
setsid npm start >"$log" 2>&1 &
pid=$!
cleanup() {
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 20); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.5; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT
key=""
for _ in $(seq 1 180); do
  key=$(grep -oE 'svc_[0-9a-f]{64}' "$log" | head -1 || true)
  [ -n "$key" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "npm start exited early"; exit 1; }
  sleep 1
done
if [ -z "$key" ]; then cat "$log"; echo "no API key printed within 180 s"; exit 1; fi
echo "printed key: ${key:0:8}…"
body=$(curl -sS -w '\n%{http_code}' "http://localhost:$port/api/v1/me" -H "Authorization: Bearer $key")
code=$(tail -1 <<<"$body")
echo "GET /api/v1/me → $code"
if [ "$code" != 200 ]; then echo "$body"; tail -50 "$log"; exit 1; fi
grep -q '"object":"user"' <<<"$body" || { echo "$body"; exit 1; }
# The app's Settings pages: the printed one-time sign-in link opens a session.
link=$(grep -oE "http://localhost:$APP_PORT/sign-in\?token=sit_[A-Za-z0-9_-]{43}" "$log" | head -1 || true)
[ -n "$link" ] || { cat "$log"; echo "no sign-in link printed"; exit 1; }
token=${link##*token=}
jar="$data/cookies"
curl -sS "$link" | grep -q 'Sign in to Murmur' || { echo "sign-in page did not open"; exit 1; }
code=$(curl -sS -o /dev/null -w '%{http_code}' -c "$jar" --data-urlencode "token=$token" "http://localhost:$APP_PORT/sign-in")
page=$(curl -sS -b "$jar" "http://localhost:$APP_PORT/settings/developer")
echo "app: POST /sign-in → $code; Settings → Developer lists $(grep -c 'data-key-id=' <<<"$page") key(s)"
[ "$code" = 303 ] && grep -q 'quick start' <<<"$page" || { echo "$page" | head -40; tail -50 "$log"; exit 1; }
# MCP by URL (docs/oauth.md): the MCP server names the app as its authorization server, whose
# metadata offers the code flow with PKCE S256.
prm=$(curl -sS "http://localhost:$port/.well-known/oauth-protected-resource/mcp")
grep -q "\"resource\":\"http://localhost:$port/mcp\"" <<<"$prm" && grep -q "\"authorization_servers\":\[\"http://localhost:$APP_PORT\"\]" <<<"$prm" \
  || { echo "protected resource metadata: $prm"; exit 1; }
asm=$(curl -sS "http://localhost:$APP_PORT/.well-known/oauth-authorization-server")
grep -q '"code_challenge_methods_supported":\["S256"\]' <<<"$asm" || { echo "authorization server metadata: $asm"; exit 1; }
echo "oauth: /mcp names http://localhost:$APP_PORT, whose metadata offers PKCE S256"
list=$(curl -sS "http://localhost:$port/api/v1/recordings?limit=3" -H "Authorization: Bearer $key")
grep -q '"object":"list"' <<<"$list" || { echo "$list"; exit 1; }
# A transcription job on the embedded defaults: queued, then completed by the worker.
wav=/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav
job=$(curl -sS "http://localhost:$port/api/v1/transcriptions" -H "Authorization: Bearer $key" -F audio=@"$wav")
id=$(grep -oE '"id":"trn_[0-9a-v]+"' <<<"$job" | head -1 | cut -d'"' -f4)
[ -n "$id" ] || { echo "POST /api/v1/transcriptions: $job"; tail -50 "$log"; exit 1; }
status=""
for _ in $(seq 1 120); do
  status=$(curl -sS "http://localhost:$port/api/v1/transcriptions/$id" -H "Authorization: Bearer $key" | grep -oE '"status":"[a-z]+"' | cut -d'"' -f4)
  case "$status" in completed|failed|canceled) break ;; esac
  sleep 1
done
echo "POST /api/v1/transcriptions → $id, $status"
[ "$status" = completed ] || { tail -50 "$log"; exit 1; }
echo "MCP conformance suite (server scenarios) against /mcp:"
MURMUR_BASE_URL="http://localhost:$port" MURMUR_API_KEY="$key" MURMUR_APP_URL="http://localhost:$APP_PORT" npm run --silent mcp:conformance > "$data/conformance.log" 2>&1 || { cat "$data/conformance.log"; exit 1; }
grep -E '^(✓|✗|### |Passed: )|Baseline check' "$data/conformance.log" || true
echo "smoke: ok"
