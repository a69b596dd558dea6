#!/usr/bin/env bash
# Smoke test of the OAuth test server: runs the scripted flows documented in
# scripts/oauth-test-server.md with curl against a running server.
#
#   scripts/oauth-test-server run -- scripts/oauth-test-server.d/smoke-test.sh
#
# Needs curl, openssl and python3. Reads AUTH_SESSION_OAUTH_SERVER (or the
# default .build/oauth-test-server/run/endpoints.json). Exits non-zero on the
# first failed expectation.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
E=${AUTH_SESSION_OAUTH_SERVER:-$here/../../.build/oauth-test-server/run/endpoints.json}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
jar=$work/cookies.txt

j() { python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d=d[k]
print("" if d is None else d)' "$1" "$2"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
expect_json() { # file key value
  local got; got=$(j "$1" "$2" 2>/dev/null || true)
  [ "$got" = "$3" ] || fail "$1: $2 = '$got', expected '$3' ($(cat "$1"))"
}

B=$(j "$E" baseURL); TOKEN=$(j "$E" endpoints.token)
USERNAME=$(j "$E" user.username); PASSWORD=$(j "$E" user.password)
csrf() { awk '$6 == "csrftoken" { print $7 }' "$jar"; }

# (a) log the user in: GET the login page (csrftoken cookie), POST credentials.
curl -sf -c "$jar" -b "$jar" -o /dev/null "$B/admin/login/"
status=$(curl -s -c "$jar" -b "$jar" -o /dev/null -w '%{http_code}' \
  --data-urlencode "csrfmiddlewaretoken=$(csrf)" --data-urlencode "username=$USERNAME" \
  --data-urlencode "password=$PASSWORD" --data-urlencode "next=/admin/" "$B/admin/login/")
[ "$status" = 302 ] && grep -q sessionid "$jar" || fail "login: HTTP $status, no session cookie"
ok "(a) admin login"

# (b) authorization code + PKCE S256 on the public authorizationCode client.
CID=$(j "$E" clients.authorizationCode.clientId)
REDIRECT=http://127.0.0.1:8765/callback
VERIFIER=$(openssl rand 32 | b64url)
CHALLENGE=$(printf %s "$VERIFIER" | openssl dgst -sha256 -binary | b64url)
location=$(curl -s -b "$jar" -G -o /dev/null -w '%{redirect_url}' "$(j "$E" endpoints.authorize)" \
  -d response_type=code -d "client_id=$CID" --data-urlencode "redirect_uri=$REDIRECT" \
  --data-urlencode "scope=openid profile email" -d state=S1 -d nonce=N1 \
  -d "code_challenge=$CHALLENGE" -d code_challenge_method=S256)
ISS=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$(j "$E" issuer)")
case "$location" in "$REDIRECT?code="*"&state=S1&iss=$ISS") ;; *) fail "authorize: Location '$location'" ;; esac
code=${location#*code=}; code=${code%%&*}
curl -s -o "$work/code.json" "$TOKEN" -d grant_type=authorization_code --data-urlencode "code=$code" \
  --data-urlencode "redirect_uri=$REDIRECT" -d "client_id=$CID" --data-urlencode "code_verifier=$VERIFIER"
expect_json "$work/code.json" scope "openid profile email"
[ -n "$(j "$work/code.json" id_token)" ] || fail "code exchange: no id_token"
ok "(b) authorization code + PKCE"

# Refresh twice with the same refresh token: 200 then invalid_grant; the
# token-request log shows the same sha256 twice.
RT=$(j "$work/code.json" refresh_token)
curl -s -o "$work/r1.json" "$TOKEN" -d grant_type=refresh_token -d "client_id=$CID" --data-urlencode "refresh_token=$RT"
[ -n "$(j "$work/r1.json" access_token)" ] || fail "refresh: $(cat "$work/r1.json")"
curl -s -o "$work/r2.json" "$TOKEN" -d grant_type=refresh_token -d "client_id=$CID" --data-urlencode "refresh_token=$RT"
expect_json "$work/r2.json" error invalid_grant
sha=$(printf %s "$RT" | openssl dgst -sha256 -r | cut -d' ' -f1)
[ "$(grep -c "\"refresh_token_sha256\": \"$sha\"" "$(j "$E" tokenRequestLog)")" = 2 ] || fail "token log"
ok "refresh rotation, reuse rejected, token log"

# (c) device flow: device authorization, user approves, device polls.
DEV=$(j "$E" clients.device.clientId)
curl -s -o "$work/dev.json" "$(j "$E" endpoints.deviceAuthorization)" -d "client_id=$DEV" --data-urlencode "scope=openid read"
DC=$(j "$work/dev.json" device_code); UC=$(j "$work/dev.json" user_code)
poll() { curl -s -o "$work/poll.json" "$TOKEN" -d grant_type=urn:ietf:params:oauth:grant-type:device_code \
  -d "client_id=$DEV" --data-urlencode "device_code=$DC"; }
poll; expect_json "$work/poll.json" error authorization_pending
location=$(curl -s -b "$jar" -c "$jar" -o /dev/null -w '%{redirect_url}' "$(j "$E" endpoints.deviceVerification)" \
  --data-urlencode "csrfmiddlewaretoken=$(csrf)" --data-urlencode "user_code=$UC")
[ "$location" = "$B/o/device-confirm/$DEV/$UC" ] || fail "device user code: Location '$location'"
location=$(curl -s -b "$jar" -c "$jar" -o /dev/null -w '%{redirect_url}' "$location" \
  --data-urlencode "csrfmiddlewaretoken=$(csrf)" -d action=accept)
[ "$location" = "$B/o/device-grant-status/$DEV/$UC" ] || fail "device confirm: Location '$location'"
poll; expect_json "$work/poll.json" scope "openid read"
ok "(c) device flow"

# Introspection as the confidential introspector (HTTP Basic).
AT=$(j "$work/poll.json" access_token)
curl -s -o "$work/intro.json" -u "$(j "$E" clients.introspector.clientId):$(j "$E" clients.introspector.clientSecret)" \
  "$(j "$E" endpoints.introspect)" --data-urlencode "token=$AT"
expect_json "$work/intro.json" active True
# Revocation as a public client (client_id in the body), then inactive.
curl -sf -o /dev/null "$(j "$E" endpoints.revoke)" -d "client_id=$DEV" --data-urlencode "token=$AT"
curl -s -o "$work/intro.json" -u "$(j "$E" clients.introspector.clientId):$(j "$E" clients.introspector.clientSecret)" \
  "$(j "$E" endpoints.introspect)" --data-urlencode "token=$AT"
expect_json "$work/intro.json" active False
ok "introspection and revocation"

# Signing-key rotation: a new kid signs, the old one stays published, the
# refresh token from before the rotation still works.
kids() { curl -sf "$(j "$E" endpoints.jwks)" | python3 -c 'import json,sys; print(" ".join(k["kid"] for k in json.load(sys.stdin)["keys"]))'; }
header_kid() { python3 -c 'import base64,json,sys; h=sys.argv[1].split(".")[0]; print(json.loads(base64.urlsafe_b64decode(h+"="*(-len(h)%4)))["kid"])' "$1"; }
OLD=$(kids)
poll; RT=$(j "$work/poll.json" refresh_token)  # an approved device code gives a new pair
"$here/../oauth-test-server" rotate-key --state-dir "$(j "$E" stateDir)" > "$work/rotate.json"
NEW=$(j "$work/rotate.json" activeKid)
[ "$(kids)" = "$NEW $OLD" ] || fail "rotate-key: JWKS kids '$(kids)', expected '$NEW $OLD'"
curl -s -o "$work/r3.json" "$TOKEN" -d grant_type=refresh_token -d "client_id=$DEV" --data-urlencode "refresh_token=$RT"
[ "$(header_kid "$(j "$work/r3.json" id_token)")" = "$NEW" ] || fail "rotate-key: refresh $(cat "$work/r3.json")"
ok "signing-key rotation"
echo "smoke test passed"
