busy_ports() {
    python3 - "${PD_PORT_CHECK_HOST:-0.0.0.0}" "${PORTS[@]}" <<'PY'
import socket
import sys

busy = []
host = sys.argv[1]
for spec in sys.argv[2:]:
    lo, _, hi = spec.partition("-")
    for port in range(int(lo), int(hi or lo) + 1):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            busy.append(str(port))
        finally:
            s.close()
print(" ".join(busy))
PY
}