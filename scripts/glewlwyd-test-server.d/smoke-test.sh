#!/usr/bin/env bash
# Smoke test of the Glewlwyd test server: runs the flows documented in
# scripts/glewlwyd-test-server.md with curl against a running server, as a
# scripted browser would (a cookie jar, no JavaScript).
#
#   scripts/glewlwyd-test-server run -- scripts/glewlwyd-test-server.d/smoke-test.sh
#
# Needs curl, openssl and python3. Reads AUTH_SESSION_OAUTH_SERVER (or the
# default .build/glewlwyd-test-server/run/endpoints.json). Exits non-zero on
# the first failed expectation. Restarts the server once (tokens must survive).
set -euo pipefail

export NO_PROXY='*' no_proxy='*'   # loopback only: never through a proxy
here=$(cd "$(dirname "$0")" && pwd)
E=${AUTH_SESSION_OAUTH_SERVER:-$here/../../.build/glewlwyd-test-server/run/endpoints.json}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
jar=$work/cookies.txt

PY=$(command -v python3)
case "$PY" in */shims/*) [ -x /usr/bin/python3 ] && PY=/usr/bin/python3 ;; esac

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
note() { echo "   $*"; }
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
# j FILE PATH: a value of a JSON file ("" when missing or null; True/False for booleans).
j() { "$PY" -c 'import json, sys
try:
    d = json.load(open(sys.argv[1]))
    for k in sys.argv[2].split("."): d = d[int(k)] if isinstance(d, list) else d[k]
except Exception: d = None
print("" if d is None else d)' "$1" "$2"; }
# claims TOKEN [header|payload]: a JWT part as a JSON file path.
claims() { local out=$work/jwt-${2:-payload}.json; "$PY" -c 'import base64, json, sys
part = sys.argv[1].split(".")[0 if sys.argv[2] == "header" else 1]
print(json.dumps(json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))))' "$1" "${2:-payload}" > "$out"; echo "$out"; }
expect_json() { # file key value
  local got; got=$(j "$1" "$2")
  [ "$got" = "$3" ] || fail "$(basename "$1"): $2 = '$got', expected '$3' ($(head -c 400 "$1"))"
}
expect_status() { [ "$1" = "$2" ] || fail "$3: HTTP $1, expected $2 ($(head -c 300 "$work/body" 2> /dev/null))"; }
query_param() { "$PY" -c 'import sys, urllib.parse as u
q = u.parse_qs(u.urlsplit(sys.argv[1]).query, keep_blank_values=True)
print(q.get(sys.argv[2], [""])[0])' "$1" "$2"; }

B=$(j "$E" baseURL); ISSUER=$(j "$E" issuer)
TOKEN=$(j "$E" endpoints.token); AUTHORIZE=$(j "$E" endpoints.authorize)
INTROSPECT=$(j "$E" endpoints.introspect); REVOKE=$(j "$E" endpoints.revoke); USERINFO=$(j "$E" endpoints.userinfo)
USERNAME=$(j "$E" user.username); PASSWORD=$(j "$E" user.password); EMAIL=$(j "$E" user.email)
PW_ID=$(j "$E" clients.password.clientId); PW_SECRET=$(j "$E" clients.password.clientSecret)
IN_ID=$(j "$E" clients.introspector.clientId); IN_SECRET=$(j "$E" clients.introspector.clientSecret)
CC_ID=$(j "$E" clients.clientCredentials.clientId); CC_SECRET=$(j "$E" clients.clientCredentials.clientSecret)
[ "$(j "$E" server)" = glewlwyd ] || fail "$E is not a Glewlwyd endpoints file"

# post URL ARGS...: curl POST, body in $work/body, prints the status.
post() { local url=$1; shift; curl -s -o "$work/body" -w '%{http_code}' "$url" "$@"; }
password_grant() { # scope -> $work/body
  post "$TOKEN" -u "$PW_ID:$PW_SECRET" -d grant_type=password --data-urlencode "username=$USERNAME" \
    --data-urlencode "password=$PASSWORD" --data-urlencode "scope=$1"
}
introspect_as_owner() { post "$INTROSPECT" -u "$PW_ID:$PW_SECRET" --data-urlencode "token=$1" > /dev/null; j "$work/body" active; }

# --- discovery and JWKS
status=$(curl -s -o "$work/disc.json" -w '%{http_code}' "$(j "$E" endpoints.openidConfiguration)")
expect_status "$status" 200 "discovery"
expect_json "$work/disc.json" issuer "$ISSUER"
expect_json "$work/disc.json" token_endpoint "$TOKEN"
expect_json "$work/disc.json" authorization_endpoint "$AUTHORIZE"
expect_json "$work/disc.json" jwks_uri "$(j "$E" endpoints.jwks)"
ok "discovery ($ISSUER/.well-known/openid-configuration)"
for key in end_session_endpoint pushed_authorization_request_endpoint require_pushed_authorization_requests \
    revocation_endpoint introspection_endpoint device_authorization_endpoint dpop_signing_alg_values_supported \
    code_challenge_methods_supported authorization_response_iss_parameter_supported; do
  if "$PY" -c 'import json, sys; sys.exit(0 if sys.argv[2] in json.load(open(sys.argv[1])) else 1)' "$work/disc.json" "$key"; then
    note "lists $key = $("$PY" -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))[sys.argv[2]]))' "$work/disc.json" "$key")"
  else
    note "does not list $key"
  fi
done
curl -sf -o "$work/jwks.json" "$(j "$E" endpoints.jwks)" || fail "jwks"
KID=$(j "$work/jwks.json" keys.0.kid)
expect_json "$work/jwks.json" keys.0.alg RS256
expect_json "$work/jwks.json" keys.0.kty RSA
spki_kid=$(openssl pkey -pubin -in "$(j "$E" stateDir)/oidc-cert.pem" -outform DER | openssl dgst -sha256 -binary | b64url)
[ "$KID" = "$spki_kid" ] || fail "kid $KID is not base64url(SHA-256(DER SubjectPublicKeyInfo)) = $spki_kid"
ok "JWKS: one RS256 key, kid = base64url(SHA-256 of the public key's DER) = $KID"

# --- password grant (confidential, HTTP Basic)
status=$(password_grant "openid profile email read"); expect_status "$status" 200 "password grant"
cp "$work/body" "$work/pw.json"
expect_json "$work/pw.json" token_type bearer
expect_json "$work/pw.json" expires_in 60
expect_json "$work/pw.json" scope "openid profile email read"
[ -n "$(j "$work/pw.json" id_token)" ] && [ -n "$(j "$work/pw.json" refresh_token)" ] || fail "password grant: $(cat "$work/pw.json")"
idt=$(j "$work/pw.json" id_token)
expect_json "$(claims "$idt" header)" kid "$KID"
c=$(claims "$idt"); expect_json "$c" aud "$PW_ID"; expect_json "$c" azp "$PW_ID"; expect_json "$c" email "$EMAIL"
expect_json "$c" name "Test User"; expect_json "$c" iss "$ISSUER"
[ $(( $(j "$c" exp) - $(j "$c" iat) )) = 60 ] || fail "ID token lifetime $(( $(j "$c" exp) - $(j "$c" iat) )) s"
c=$(claims "$(j "$work/pw.json" access_token)"); expect_json "$c" client_id "$PW_ID"; expect_json "$c" type access_token
ok "password grant (Basic): access token (JWT, 60 s), refresh token, ID token (exp = iat + 60)"
# The public password client cannot name itself: client_id without secret -> 403.
status=$(post "$TOKEN" -d grant_type=password -d "client_id=$(j "$E" clients.passwordPublic.clientId)" \
  --data-urlencode "username=$USERNAME" --data-urlencode "password=$PASSWORD" -d scope=read)
expect_status "$status" 403 "password grant with a public client_id"
status=$(post "$TOKEN" -d grant_type=password --data-urlencode "username=$USERNAME" --data-urlencode "password=$PASSWORD" -d scope=read)
expect_status "$status" 200 "password grant without any client"
ok "password grant, public client: client_id alone -> 403; no client at all -> 200"

# --- refresh: rotation, reuse detection
RT0=$(j "$work/pw.json" refresh_token)
status=$(post "$TOKEN" -u "$PW_ID:$PW_SECRET" -d grant_type=refresh_token --data-urlencode "refresh_token=$RT0")
expect_status "$status" 200 "refresh"; cp "$work/body" "$work/r1.json"
RT1=$(j "$work/r1.json" refresh_token); AT1=$(j "$work/r1.json" access_token)
[ -n "$RT1" ] && [ "$RT1" != "$RT0" ] || fail "refresh did not rotate the refresh token: $(cat "$work/r1.json")"
[ -z "$(j "$work/r1.json" id_token)" ] || fail "refresh returned an id_token"
expect_json "$work/r1.json" scope "openid profile email read"
ok "refresh: new access and refresh token (no id_token)"
status=$(post "$TOKEN" -u "$PW_ID:$PW_SECRET" -d grant_type=refresh_token --data-urlencode "refresh_token=$RT0")
expect_status "$status" 400 "reuse of a spent refresh token"
[ ! -s "$work/body" ] || fail "reuse: expected an empty body, got $(cat "$work/body")"
status=$(post "$TOKEN" -u "$PW_ID:$PW_SECRET" -d grant_type=refresh_token --data-urlencode "refresh_token=$RT1")
expect_status "$status" 400 "the newest refresh token after a reuse"
[ "$(introspect_as_owner "$AT1")" = True ] || fail "the newest access token should stay active after a reuse"
ok "reuse of the spent refresh token -> 400 (empty body); the newest refresh token is disabled (400), its access token stays active"

# --- revocation, introspection, userinfo
status=$(password_grant "openid profile email read"); expect_status "$status" 200 "password grant"
cp "$work/body" "$work/pw2.json"; RT=$(j "$work/pw2.json" refresh_token); AT=$(j "$work/pw2.json" access_token)
status=$(post "$USERINFO" -G -H "Authorization: Bearer $AT")
expect_status "$status" 200 "userinfo"
expect_json "$work/body" email "$EMAIL"; expect_json "$work/body" given_name Test; expect_json "$work/body" family_name User
expect_json "$work/body" preferred_username "$USERNAME"
ok "userinfo: $(cat "$work/body")"
status=$(post "$TOKEN" -u "$IN_ID:$IN_SECRET" -d grant_type=client_credentials -d scope=introspection)
expect_status "$status" 200 "introspector token"; IAT=$(j "$work/body" access_token)
status=$(post "$INTROSPECT" -H "Authorization: Bearer $IAT" --data-urlencode "token=$AT")
expect_status "$status" 200 "introspection (Bearer)"
expect_json "$work/body" active True; expect_json "$work/body" client_id "$PW_ID"; expect_json "$work/body" username "$USERNAME"
expect_json "$work/body" token_type bearer
note "introspection: $(cat "$work/body")"
status=$(post "$INTROSPECT" -u "$IN_ID:$IN_SECRET" --data-urlencode "token=$AT")
expect_status "$status" 200 "introspection (introspector, Basic)"; expect_json "$work/body" active True
[ "$(introspect_as_owner "$AT")" = True ] || fail "introspection by the owner (Basic)"
status=$(post "$INTROSPECT" -u "$CC_ID:$CC_SECRET" --data-urlencode "token=$AT")
expect_status "$status" 200 "introspection (another client, Basic)"; expect_json "$work/body" active True
status=$(post "$INTROSPECT" -d "client_id=$(j "$E" clients.device.clientId)" --data-urlencode "token=$AT")
expect_status "$status" 401 "introspection by a public client"
status=$(post "$INTROSPECT" --data-urlencode "token=$AT"); expect_status "$status" 401 "introspection without auth"
status=$(post "$INTROSPECT" -u "$IN_ID:$IN_SECRET" -d token=nonsense); expect_json "$work/body" active False
ok "introspection: any confidential client (Basic) or a Bearer token with scope introspection sees any token; public client or no auth -> 401; unknown token -> active false"
status=$(post "$REVOKE" -u "$PW_ID:$PW_SECRET" --data-urlencode "token=$RT" -d token_type_hint=refresh_token)
expect_status "$status" 200 "revocation"
status=$(post "$TOKEN" -u "$PW_ID:$PW_SECRET" -d grant_type=refresh_token --data-urlencode "refresh_token=$RT")
expect_status "$status" 400 "refresh after revocation"
[ "$(introspect_as_owner "$AT")" = True ] || fail "revoking the refresh token should leave the access token active"
status=$(post "$REVOKE" -u "$PW_ID:$PW_SECRET" --data-urlencode "token=$AT"); expect_status "$status" 200 "revoking the access token"
[ "$(introspect_as_owner "$AT")" = False ] || fail "the revoked access token is still active"
status=$(post "$USERINFO" -G -H "Authorization: Bearer $AT"); expect_status "$status" 401 "userinfo with a revoked token"
ok "revocation (Basic): 200, refresh then 400; each token separately (the access token stays active until revoked itself)"

# --- client credentials
status=$(post "$TOKEN" -u "$CC_ID:$CC_SECRET" -d grant_type=client_credentials -d scope=read)
expect_status "$status" 200 "client credentials"
expect_json "$work/body" scope read; expect_json "$work/body" expires_in 60
[ -z "$(j "$work/body" refresh_token)" ] || fail "client credentials returned a refresh token"
ok "client_credentials: $(j "$work/body" token_type) token, scope read, no refresh token"

# --- a user session (what a scripted browser does instead of the login page)
status=$(curl -s -o "$work/body" -w '%{http_code}' -c "$jar" -b "$jar" -H 'Content-Type: application/json' \
  -d "{\"username\":\"$USERNAME\",\"password\":\"$PASSWORD\"}" "$(j "$E" endpoints.userLogin)")
expect_status "$status" 200 "user login"
grep -q GLEWLWYD2_SESSION_ID "$jar" || fail "no session cookie"
ok "user login: POST $(j "$E" endpoints.userLogin) (JSON) -> 200, cookie GLEWLWYD2_SESSION_ID"
grant() { # client_id scope
  curl -s -o "$work/body" -w '%{http_code}' -b "$jar" -c "$jar" -X PUT -H 'Content-Type: application/json' \
    -d "{\"scope\":\"$2\"}" "$B/api/auth/grant/$1"
}
get_location() { curl -s -o /dev/null -w '%{http_code} %{redirect_url}' -b "$jar" -c "$jar" "$@"; }

# --- device flow
DEV=$(j "$E" clients.device.clientId)
status=$(post "$(j "$E" endpoints.deviceAuthorization)" -d "client_id=$DEV" --data-urlencode "scope=openid read")
expect_status "$status" 200 "device authorization"; cp "$work/body" "$work/dev.json"
DC=$(j "$work/dev.json" device_code); UC=$(j "$work/dev.json" user_code); VUC=$(j "$work/dev.json" verification_uri_complete)
expect_json "$work/dev.json" verification_uri "$(j "$E" endpoints.deviceVerification)"
expect_json "$work/dev.json" interval "$(j "$E" deviceIntervalSeconds)"
note "device authorization: $(cat "$work/dev.json")"
poll() { post "$TOKEN" -d grant_type=urn:ietf:params:oauth:grant-type:device_code -d "client_id=$DEV" --data-urlencode "device_code=$DC"; }
status=$(poll); expect_status "$status" 400 "device poll"; expect_json "$work/body" error authorization_pending
status=$(poll); expect_status "$status" 400 "device poll"
note "an immediate second poll: $(cat "$work/body")"
read -r status location <<< "$(get_location "$VUC")"
[ "$status" = 302 ] && [ "${location%%\?*}" = "$B/login.html" ] || fail "device page without g_continue: $status $location"
status=$(grant "$DEV" "openid read"); expect_status "$status" 200 "grant for the device client"
read -r status location <<< "$(get_location "$VUC&g_continue")"
[ "$status" = 302 ] && [ "$(query_param "$location" prompt)" = deviceComplete ] || fail "device approval: $status $location"
sleep "$(j "$E" deviceIntervalSeconds)"
status=$(poll); expect_status "$status" 200 "device poll after approval"
expect_json "$work/body" scope "openid read"
[ -n "$(j "$work/body" id_token)" ] || fail "device tokens without id_token: $(cat "$work/body")"
sleep "$(j "$E" deviceIntervalSeconds)"
status=$(poll)
note "a poll after the tokens were issued: HTTP $status $(cat "$work/body")"
ok "device flow: pending, login (API), PUT grant, GET verification_uri_complete&g_continue -> prompt=deviceComplete, tokens with id_token"

# --- authorization code + PKCE S256, as a scripted browser
code_flow() { # client_id scope state nonce [extra authorize args...] -> $location (the redirect to the client)
  local cid=$1 scope=$2 state=$3 nonce=$4 callback
  shift 4
  VERIFIER=$(openssl rand 32 | b64url)
  CHALLENGE=$(printf %s "$VERIFIER" | openssl dgst -sha256 -binary | b64url)
  read -r status location <<< "$(get_location -G "$AUTHORIZE" -d response_type=code -d "client_id=$cid" \
    --data-urlencode "redirect_uri=$REDIRECT" --data-urlencode "scope=$scope" -d "state=$state" -d "nonce=$nonce" \
    -d "code_challenge=$CHALLENGE" -d code_challenge_method=S256 "$@")"
  [ "$status" = 302 ] && [ "${location%%\?*}" = "$B/login.html" ] || fail "authorize: $status $location"
  # login.html, once the user is signed in and has consented, goes on to
  # callback_url (the authorize URL again) with g_continue appended.
  CALLBACK="$(query_param "$location" callback_url)&g_continue"
}
finish_code_flow() { # -> $CODE, checks iss and state
  read -r status location <<< "$(get_location "$CALLBACK")"
  [ "$status" = 302 ] && [ "${location%%\?*}" = "$REDIRECT" ] || fail "authorize (g_continue): $status $location"
  [ "$(query_param "$location" iss)" = "$ISSUER" ] || fail "authorization response without iss: $location"
  [ "$(query_param "$location" state)" = "$1" ] || fail "authorization response state: $location"
  CODE=$(query_param "$location" code); [ -n "$CODE" ] || fail "no code: $location"
}
exchange() { # client_id -> $work/body
  post "$TOKEN" -d grant_type=authorization_code --data-urlencode "code=$CODE" --data-urlencode "redirect_uri=$REDIRECT" \
    -d "client_id=$1" --data-urlencode "code_verifier=$VERIFIER"
}
REDIRECT=http://127.0.0.1:8765/callback
CID=$(j "$E" clients.authorizationCode.clientId)
code_flow "$CID" "openid profile email" S1 N1
finish_code_flow S1
note "redirect: $location"
status=$(exchange "$CID"); expect_status "$status" 200 "code exchange"; cp "$work/body" "$work/code.json"
expect_json "$work/code.json" scope "openid profile email"
c=$(claims "$(j "$work/code.json" id_token)"); expect_json "$c" nonce N1; expect_json "$c" aud "$CID"
[ -n "$(j "$c" sid)" ] && [ -n "$(j "$c" at_hash)" ] || fail "ID token claims: $(cat "$c")"
note "ID token claims: $(cat "$c")"
status=$(exchange "$CID"); expect_status "$status" 403 "a replayed code"; expect_json "$work/body" error invalid_code
status=$(post "$TOKEN" -d grant_type=refresh_token -d "client_id=$CID" --data-urlencode "refresh_token=$(j "$work/code.json" refresh_token)")
expect_status "$status" 400 "refresh of a token whose code was replayed"
ok "authorization code + PKCE S256 (consent given at start): login.html -> callback_url&g_continue -> 302 with iss, state, code; exchange; replay -> 403 invalid_code and the code's tokens are revoked"

CID2=$(j "$E" clients.authorizationCodeConsent.clientId)
code_flow "$CID2" "openid profile email" S2 N2
curl -s -o "$work/body" -b "$jar" "$B/api/auth/grant/$CID2/openid%20profile%20email"
note "consent asked: $(cat "$work/body")"
status=$(grant "$CID2" "openid profile email"); expect_status "$status" 200 "consent"
finish_code_flow S2
status=$(exchange "$CID2"); expect_status "$status" 200 "code exchange (consent client)"
cp "$work/body" "$work/consent.json"; expect_json "$work/consent.json" scope "openid profile email"
status=$(post "$TOKEN" -d grant_type=refresh_token -d "client_id=$CID2" --data-urlencode "refresh_token=$(j "$work/consent.json" refresh_token)")
expect_status "$status" 200 "refresh by a public code client"; cp "$work/body" "$work/consent-r1.json"
RT_BEFORE_RESTART=$(j "$work/consent-r1.json" refresh_token)
ok "authorization code with consent: GET /api/auth/grant/$CID2/<scopes>, PUT /api/auth/grant/$CID2, then callback_url"

# --- PAR
status=$(post "$(j "$E" endpoints.pushedAuthorizationRequest)" -d response_type=code -d "client_id=$CID" \
  --data-urlencode "redirect_uri=$REDIRECT" --data-urlencode "scope=openid profile" -d state=S3 -d nonce=N3 \
  -d "code_challenge=$(VERIFIER=$(openssl rand 32 | b64url); echo "$VERIFIER" > "$work/verifier"; printf %s "$VERIFIER" | openssl dgst -sha256 -binary | b64url)" \
  -d code_challenge_method=S256)
expect_status "$status" 201 "PAR"; VERIFIER=$(cat "$work/verifier")
REQUEST_URI=$(j "$work/body" request_uri); note "PAR: $(cat "$work/body")"
read -r status location <<< "$(get_location -G "$AUTHORIZE" -d "client_id=$CID" --data-urlencode "request_uri=$REQUEST_URI")"
[ "$status" = 302 ] && [ "${location%%\?*}" = "$B/login.html" ] || fail "authorize with request_uri: $status $location"
CALLBACK="$(query_param "$location" callback_url)&g_continue"
finish_code_flow S3
status=$(exchange "$CID"); expect_status "$status" 200 "code exchange (PAR)"; expect_json "$work/body" scope "openid profile"
ok "PAR: 201 request_uri, authorize with client_id + request_uri, code, exchange"

# --- restart: same port and database, tokens stay valid
"$here/../glewlwyd-test-server" restart --state-dir "$(j "$E" stateDir)" > /dev/null
status=$(post "$TOKEN" -d grant_type=refresh_token -d "client_id=$CID2" --data-urlencode "refresh_token=$RT_BEFORE_RESTART")
expect_status "$status" 200 "refresh after restart"; cp "$work/body" "$work/consent-r2.json"
curl -sf -o "$work/jwks2.json" "$(j "$E" endpoints.jwks)" || fail "jwks after restart"
expect_json "$work/jwks2.json" keys.0.kid "$KID"
status=$(post "$USERINFO" -G -H "Authorization: Bearer $(j "$work/consent-r1.json" access_token)")
expect_status "$status" 200 "userinfo after restart (token from before)"
ok "restart: same kid, a refresh token and an access token from before still work"

# --- end session (RP-initiated logout)
code_flow "$CID" "openid profile" S8 N8
finish_code_flow S8
status=$(exchange "$CID"); expect_status "$status" 200 "code exchange"; cp "$work/body" "$work/es.json"
IDT=$(j "$work/es.json" id_token); AT=$(j "$work/es.json" access_token); RT=$(j "$work/es.json" refresh_token)
RT2=$(j "$work/consent-r2.json" refresh_token)   # same browser session, but from a refresh
read -r status location <<< "$(get_location -G "$(j "$E" endpoints.endSession)" --data-urlencode "id_token_hint=$IDT" \
  --data-urlencode "post_logout_redirect_uri=http://127.0.0.1/logout" -d state=S9)"
[ "$status" = 302 ] && [ "$(query_param "$location" prompt)" = end_session ] || fail "end_session: $status $location"
[ "$(query_param "$location" callback_url)" = "http://127.0.0.1/logout?state=S9" ] || fail "end_session callback_url: $location"
note "end_session: $status $location"
SID=$(query_param "$location" sid)
status=$(curl -s -o "$work/body" -w '%{http_code}' -b "$jar" -X DELETE "$B/api/oidc/session/$SID")
expect_status "$status" 200 "DELETE the OIDC session"
status=$(post "$USERINFO" -G -H "Authorization: Bearer $AT"); expect_status "$status" 401 "userinfo after end of session"
status=$(post "$TOKEN" -d grant_type=refresh_token -d "client_id=$CID" --data-urlencode "refresh_token=$RT")
expect_status "$status" 400 "refresh after end of session"
status=$(post "$TOKEN" -d grant_type=refresh_token -d "client_id=$CID2" --data-urlencode "refresh_token=$RT2")
expect_status "$status" 200 "refresh of a token from an earlier refresh, after end of session"
status=$(curl -s -o /dev/null -w '%{http_code}' -b "$jar" -c "$jar" -X DELETE "$(j "$E" endpoints.userLogin)")
expect_status "$status" 200 "user logout"
ok "end_session: 302 to login.html (prompt=end_session, callback_url = post_logout_redirect_uri?state=S9); DELETE /api/oidc/session/<sid> revokes the session's unused refresh tokens and their access tokens (tokens from a refresh survive); DELETE /api/auth/ logs out"

# --- DPoP (draft 07)
openssl genrsa -out "$work/dpop.pem" 2048 2> /dev/null
dpop_proof() { # htm htu [access_token]
  "$PY" - "$work/dpop.pem" "$1" "$2" "${3:-}" <<'PYEOF'
import base64, hashlib, json, secrets, subprocess, sys, time
key, htm, htu, access_token = sys.argv[1:5]
b64 = lambda data: base64.urlsafe_b64encode(data).rstrip(b"=").decode()
modulus = subprocess.run(["openssl", "rsa", "-in", key, "-noout", "-modulus"], capture_output=True, text=True, check=True).stdout
header = {"typ": "dpop+jwt", "alg": "RS256", "jwk": {"kty": "RSA", "n": b64(bytes.fromhex(modulus.strip().split("=")[1])), "e": "AQAB"}}
claims = {"jti": secrets.token_urlsafe(16), "htm": htm, "htu": htu, "iat": int(time.time())}
if access_token:
    claims["ath"] = b64(hashlib.sha256(access_token.encode()).digest())
signing_input = (b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())).encode()
signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key], input=signing_input, capture_output=True, check=True).stdout
print(signing_input.decode() + "." + b64(signature))
PYEOF
}
status=$(post "$TOKEN" -u "$PW_ID:$PW_SECRET" -H "DPoP: $(dpop_proof POST "$TOKEN")" -d grant_type=password \
  --data-urlencode "username=$USERNAME" --data-urlencode "password=$PASSWORD" -d "scope=openid email")
expect_status "$status" 200 "password grant with DPoP"; cp "$work/body" "$work/dpop.json"
expect_json "$work/dpop.json" token_type DPoP
DAT=$(j "$work/dpop.json" access_token)
[ -n "$(j "$(claims "$DAT")" cnf.jkt)" ] || fail "DPoP access token without cnf.jkt"
status=$(post "$USERINFO" -G -H "Authorization: DPoP $DAT" -H "DPoP: $(dpop_proof GET "$USERINFO" "$DAT")")
expect_status "$status" 200 "userinfo with DPoP"
status=$(post "$USERINFO" -G -H "Authorization: Bearer $DAT"); expect_status "$status" 401 "DPoP token used as Bearer"
status=$(post "$TOKEN" -u "$PW_ID:$PW_SECRET" -d grant_type=refresh_token --data-urlencode "refresh_token=$(j "$work/dpop.json" refresh_token)")
expect_status "$status" 403 "refresh of a DPoP-bound token without a proof"; expect_json "$work/body" error invalid_dpop_proof
ok "DPoP: token_type DPoP, cnf.jkt; userinfo needs 'Authorization: DPoP' + proof (Bearer -> 401); refresh without proof -> 403 invalid_dpop_proof"

echo "smoke test passed"
