{% include "sh/header.sh" %}
# Sends one chat completion to {{ m.entry_what|comment }}; expects HTTP 200 with `choices`.
# Usage: verify.sh [HOST]
# Target: HOST, else PD_PROXY_URL, else the URL run.sh recorded on node 0 (PD_LOG_DIR/endpoint.url),
# else node 0 of PD_NODE_IPS, else 127.0.0.1. OPENAI_API_KEY is read from the environment only.
set -euo pipefail

LAYOUT={{ m.view.name }}
PORT={{ m.entry_port }}
BODY={{ m.verify_body }}

{% include "sh/resolve_url.sh" %}
{% include "sh/http.sh" %}
resolve_url "${1:-}"
URL="$BASE/v1/chat/completions"
echo "verify.sh: trying $URL (from $FROM) with $(http_client)" >&2

out=$(mktemp)
hdr=$(mktemp)
trap 'rm -f "$out" "$hdr"' EXIT
headers=(-H 'Content-Type: application/json')
if [[ -n ${OPENAI_API_KEY:-} ]]; then
    # Through a file, so the key never shows in the process list.
    printf 'Authorization: Bearer %s\n' "$OPENAI_API_KEY" >"$hdr"
    headers+=(-H "@$hdr")
fi
# Straight to the deployment, never through http_proxy/https_proxy/all_proxy.
if ! code=$(http_request -sS -m "${PD_VERIFY_TIMEOUT:-600}" -o "$out" -w '%{http_code}' "${headers[@]}" -d "$BODY" "$URL"); then
    echo "verify.sh: FAIL: no response from $URL (from $FROM); on another host, set PD_PROXY_URL" >&2
    exit 1
fi
if [[ $code != 200 ]]; then
    echo "verify.sh: FAIL: HTTP $code from $URL; body:" >&2
    cat "$out" >&2
    exit 1
fi
if ! python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1])).get("choices") else 1)' "$out" 2>/dev/null; then
    echo "verify.sh: FAIL: HTTP 200 without choices from $URL; body:" >&2
    cat "$out" >&2
    exit 1
fi
echo "verify.sh: ok: HTTP 200 with choices from $URL"
cat "$out"
echo
