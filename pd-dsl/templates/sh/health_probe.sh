{% include "sh/http.sh" %}
for port in {{ ports|words }}; do http_request -fsS --connect-timeout 1 -m 2 -o /dev/null "http://127.0.0.1:$port/health" || exit 1; done
