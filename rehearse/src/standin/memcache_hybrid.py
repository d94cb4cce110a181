"""Stand-in of memcache_hybrid's MetaService for the rehearsal.

Every vllm-ascend release requires memcache_hybrid (requirements.txt), so
the image has it; the real wheel imports torch and torch_npu on load, which
this machine lacks. The stand-in keeps the real service's contract: it reads
the config file `MMC_META_CONFIG_PATH` names (`key = value` lines), needs
`ock.mmc.meta_service_url` and `ock.mmc.meta_service.config_store_url` as
tcp://HOST:PORT, binds both on that host, and serves until SIGTERM. A
missing variable, file, key or a malformed URL exits 1 naming it.
"""

import os
import signal
import socket
import sys
import threading

_URLS = ("ock.mmc.meta_service_url", "ock.mmc.meta_service.config_store_url")


def _die(msg):
    sys.stderr.write(f"memcache_hybrid MetaService (stand-in): {msg}\n")
    sys.exit(1)


def _read(path):
    conf = {}
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if "=" not in line:
                _die(f"{path}: `{line}` is not `key = value`")
            k, v = line.split("=", 1)
            conf[k.strip()] = v.strip()
    return conf


def _serve(sock):
    while True:
        try:
            conn, _ = sock.accept()
        except OSError:
            return
        conn.close()


class MetaService:
    @staticmethod
    def main():
        path = os.environ.get("MMC_META_CONFIG_PATH")
        if not path:
            _die("MMC_META_CONFIG_PATH is not set")
        try:
            conf = _read(path)
        except OSError as e:
            _die(f"cannot read MMC_META_CONFIG_PATH={path}: {e}")
        socks = []
        for key in _URLS:
            url = conf.get(key)
            if url is None:
                _die(f"{path} has no `{key}`")
            host, sep, port = url.removeprefix("tcp://").rpartition(":")
            if not url.startswith("tcp://") or not sep or not port.isdigit():
                _die(f"{path}: `{key} = {url}` is not tcp://HOST:PORT")
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((host, int(port)))
            except OSError as e:
                _die(f"cannot bind {host}:{port} ({key}): {e}")
            s.listen(128)
            socks.append(s)
            threading.Thread(target=_serve, args=(s,), daemon=True).start()
        sys.stderr.write(f"memcache_hybrid MetaService (stand-in): serving {', '.join(conf[k] for k in _URLS)}\n")
        sys.stderr.flush()
        done = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: done.set())
        signal.signal(signal.SIGINT, lambda *_: done.set())
        done.wait()
        for s in socks:
            s.close()
