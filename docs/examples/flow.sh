#!/usr/bin/env bash
# The whole flow with curl, openssl and jq. Set ISSUER, CLIENT_ID and REDIRECT_URI first, e.g.
#   ISSUER=https://auth.example.com CLIENT_ID=Xc1... REDIRECT_URI=http://localhost:8080/callback bash flow.sh
set -euo pipefail

# 0. Discovery (RFC 8414): the endpoints.
METADATA=$(curl -sSf "$ISSUER/.well-known/oauth-authorization-server")
AUTHORIZE=$(jq -r .authorization_endpoint <<<"$METADATA")
TOKEN=$(jq -r .token_endpoint <<<"$METADATA")

# 1. PKCE: a random verifier (43-128 characters), its S256 challenge, and a state.
CODE_VERIFIER=$(openssl rand -base64 48 | tr '+/' '-_' | tr -d '=\n')
CODE_CHALLENGE=$(printf '%s' "$CODE_VERIFIER" | openssl dgst -sha256 -binary | openssl base64 | tr '+/' '-_' | tr -d '=\n')
STATE=$(openssl rand -hex 16)

# 2. Send the user's browser to the authorization endpoint (GET; scopes separated by spaces, %20).
echo "Open in a browser: $AUTHORIZE?response_type=code&client_id=$CLIENT_ID&redirect_uri=$(jq -rn --arg u "$REDIRECT_URI" '$u|@uri')&scope=links:read%20links:write&state=$STATE&code_challenge=$CODE_CHALLENGE&code_challenge_method=S256"

# 3. The user signs in and clicks Allow; the browser lands on
#    REDIRECT_URI?code=...&state=...&iss=...   Paste that whole URL here.
read -r -p "Callback URL: " CALLBACK
query() { sed -n "s/.*[?&]$1=\([^&]*\).*/\1/p" <<<"$CALLBACK"; }
[ "$(query state)" = "$STATE" ] || { echo "state does not match: not our request" >&2; exit 1; }
[ "$(query iss)" = "$(jq -rn --arg u "$ISSUER" '$u|@uri')" ] || { echo "iss is not our issuer" >&2; exit 1; }
CODE=$(query code)

# 4. Exchange the code (form-encoded POST; no client secret).
TOKENS=$(curl -sS -X POST "$TOKEN" \
  --data-urlencode grant_type=authorization_code \
  --data-urlencode "code=$CODE" \
  --data-urlencode "code_verifier=$CODE_VERIFIER" \
  --data-urlencode "client_id=$CLIENT_ID" \
  --data-urlencode "redirect_uri=$REDIRECT_URI")
echo "Tokens: $TOKENS"
ACCESS_TOKEN=$(jq -r .access_token <<<"$TOKENS")
REFRESH_TOKEN=$(jq -r .refresh_token <<<"$TOKENS")

# 5. Call an API: Authorization: Bearer <access_token>. The claims, decoded (not verified): aud lists
#    every API serving one of the scopes. With LINKS_API (the links API's URL) set, read your links.
jq -R 'split(".")[1] | gsub("-";"+") | gsub("_";"/") | . + ("=" * ((4 - length % 4) % 4)) | @base64d | fromjson' \
  <<<"$ACCESS_TOKEN"
if [ -n "${LINKS_API:-}" ]; then
  echo "Links: $(curl -sSf -H "Authorization: Bearer $ACCESS_TOKEN" "$LINKS_API/api/links")"
fi

# 6. Refresh before expires_in runs out. Keep the NEW refresh token: the old one is now spent.
TOKENS=$(curl -sS -X POST "$TOKEN" \
  --data-urlencode grant_type=refresh_token \
  --data-urlencode "refresh_token=$REFRESH_TOKEN" \
  --data-urlencode "client_id=$CLIENT_ID")
echo "Refreshed: $TOKENS"
