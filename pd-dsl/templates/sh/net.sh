# This host's addresses as `INTERFACE ADDRESS PREFIXLEN` lines: `ip` (iproute2)
# when installed, else python3 over rtnetlink, as `ip -o addr` reads them (the
# image installs net-tools, not iproute2; python3 is always there).
addr_table() {
    if command -v ip >/dev/null 2>&1; then
        ip -o addr show 2>/dev/null | awk '{split($4, a, "/"); sub(/@.*/, "", $2); print $2, a[1], a[2]}'
        return
    fi
    python3 - <<'PY'
import socket
import struct

RTM_NEWADDR, RTM_GETADDR, NLMSG_ERROR, NLMSG_DONE = 20, 22, 2, 3
IFA_ADDRESS, IFA_LOCAL = 1, 2
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.bind((0, 0))
# nlmsghdr + ifaddrmsg: dump every address of every family.
s.send(struct.pack("=IHHII", 24, RTM_GETADDR, 0x1 | 0x300, 1, 0) + struct.pack("=BBBBI", 0, 0, 0, 0, 0))
done = False
while not done:
    data = s.recv(1 << 16)
    off = 0
    while not done and off + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, off)
        if kind == NLMSG_DONE or length < 16:
            done = True
        elif kind == NLMSG_ERROR:
            raise SystemExit("rtnetlink refused to list the addresses")
        elif kind == RTM_NEWADDR:
            family, prefix, _, _, index = struct.unpack_from("=BBBBI", data, off + 16)
            attrs, a = {}, off + 24
            while a + 4 <= off + length:
                alen, atype = struct.unpack_from("=HH", data, a)
                if alen < 4:
                    break
                attrs[atype] = data[a + 4:a + alen]
                a += (alen + 3) & ~3
            raw = attrs.get(IFA_LOCAL) or attrs.get(IFA_ADDRESS)
            if raw and family in (socket.AF_INET, socket.AF_INET6):
                print(socket.if_indextoname(index), socket.inet_ntop(family, raw), prefix)
        off += (length + 3) & ~3
PY
}

# The source address this host uses towards $1: `ip route get`, else the local
# address of a UDP socket connected to it (connect() picks route and source; no
# packet is sent).
source_ip() {
    if command -v ip >/dev/null 2>&1; then
        ip route get "$1" 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "src" && src == "") src = $(i + 1)} END {print src}'
        return
    fi
    python3 - "$1" <<'PY'
import socket
import sys

s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET, socket.SOCK_DGRAM)
s.connect((sys.argv[1], 9))
print(s.getsockname()[0])
PY
}

# How addr_table and source_ip read the network here (said in the log).
net_tool() {
    if command -v ip >/dev/null 2>&1; then echo "ip"; else echo "python3 (no ip command)"; fi
}

# Addresses of this host, one per line.
local_addresses() {
    addr_table 2>/dev/null | awk '{print $2}'
    hostname -I 2>/dev/null | tr ' ' '\n'
}
