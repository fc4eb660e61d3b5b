#!/usr/bin/env bash
# The new user's check (issue 38, item 1): the example of docs/getting-started.md, the very files
# docs/examples/start-express.ts and express-quick-start.ts that the page shows (the docs tests hold
# them to it byte for byte), started twice on one fresh PGlite data directory as a service restarts.
# Each start must listen, sign alice in over HTTP (POST /api/v1/auth/login) and serve the protected
# GET /api/v1/things with her access token, answering her id, the same id both times; then SIGTERM
# must stop it with exit status 0 (the example closes its storage, which releases the directory).
# A seed that throws on the second start (createUser's 40900 "The username is taken") ends the
# process before it listens: the check fails, naming the start and showing what it printed.
#
# It runs the TypeScript sources through tsx with the repository's tsconfig paths (no build needed),
# from a temporary directory that holds ./auth-data and is removed at the end. It never hangs: each
# start has NEW_USER_START_SECONDS (default 180) to answer on its port, polled while the process
# lives, and 30 seconds to stop; a process left over is killed by its pid.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
example="$root/docs/examples/start-express.ts"
start_limit="${NEW_USER_START_SECONDS:-180}"
tsx_loader="$(cd "$root" && node -p 'require("node:url").pathToFileURL(require.resolve("tsx/esm")).href')"

work="$(mktemp -d "${TMPDIR:-/tmp}/portcullis-new-user.XXXXXX")"
pid=""
cleanup() {
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

random() { node -p 'require("node:crypto").randomBytes(32).toString("base64url")'; }
free_port() {
  node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}
# Prints the value at a dotted path of a JSON document read from stdin, or nothing.
json_field() { node -e 'let t = ""; process.stdin.on("data", (c) => (t += c)).on("end", () => { try { const v = process.argv[1].split(".").reduce((o, k) => o?.[k], JSON.parse(t)); if (v !== undefined) console.log(typeof v === "string" ? v : JSON.stringify(v)); } catch {} });' "$1"; }

export AUTH_SIGNING_SECRET="$(random)" AUTH_ENCRYPTION_KEY="$(random)" ALICE_PASSWORD="$(random)"
export TSX_TSCONFIG_PATH="$root/tsconfig.json"

fail() {
  echo "new user: $*" >&2
  echo "--- what start $start printed:" >&2
  cat "$work/start-$start.log" >&2 || true
  exit 1
}

owners=()
for start in 1 2; do
  port="$(free_port)"
  base="http://127.0.0.1:$port"
  echo "--- start $start: $example on port $port, data in $work/auth-data"
  (cd "$work" && PORT="$port" exec node --import "$tsx_loader" "$example") >"$work/start-$start.log" 2>&1 &
  pid=$!

  began=$SECONDS
  until curl -s -o /dev/null --max-time 5 "$base/api/v1/auth/me"; do
    kill -0 "$pid" 2>/dev/null || { wait "$pid" && status=0 || status=$?; fail "start $start exited with status $status before it listened"; }
    ((SECONDS - began < start_limit)) || fail "start $start did not listen on port $port within ${start_limit}s"
    sleep 0.5
  done
  echo "listening after $((SECONDS - began))s"

  login="$(curl -s --max-time 60 "$base/api/v1/auth/login" -H 'content-type: application/json' \
    -d "{\"username\":\"alice\",\"password\":\"$ALICE_PASSWORD\"}")"
  token="$(json_field data.accessToken <<<"$login")"
  [[ -n "$token" ]] || fail "start $start: signing alice in answered $(json_field code <<<"$login") $(json_field message <<<"$login"), not tokens"
  things="$(curl -s --max-time 30 -w '\n%{http_code}' "$base/api/v1/things" -H "authorization: Bearer $token")"
  status_code="${things##*$'\n'}"
  body="${things%$'\n'*}"
  owner="$(json_field owner <<<"$body")"
  [[ "$status_code" == 200 && -n "$owner" ]] || fail "start $start: GET /api/v1/things answered HTTP $status_code $body"
  echo "alice signed in; GET /api/v1/things answered HTTP 200 $body"
  owners+=("$owner")

  kill -TERM "$pid"
  stopping=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    ((SECONDS - stopping < 30)) || fail "start $start did not stop within 30s of SIGTERM"
    sleep 0.2
  done
  wait "$pid" && status=0 || status=$?
  pid=""
  ((status == 0)) || fail "start $start exited with status $status after SIGTERM, not 0"
  echo "stopped on SIGTERM (exit 0)"
done

[[ "${owners[0]}" == "${owners[1]}" ]] || { start=2; fail "alice's id changed across the restart: ${owners[0]}, then ${owners[1]}"; }
echo "new user: both starts served the protected route to alice (id ${owners[0]}) on one PGlite directory"
