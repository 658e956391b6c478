#!/usr/bin/env python3
"""safety-figures.py -- the closing figures of issue 12, measured against a
pathd binary this script starts itself on free loopback ports.

    scripts/safety-figures.py [--pathd build/pathd] [ping] [slowloris] [deadline]

ping       RSS of the server while one WebSocket peer sends 100 MB of pings
           and never reads (default --ws-max-outbound, 16 MiB).
slowloris  /healthz latency while 1100 connections trickle header bytes,
           spread over 127.0.0.2-127.0.0.10 so that the per-IP limit (128)
           does not turn them away: on --health-port, and on --port.
deadline   two batches with deadline_ms 3600000 on a 2-worker server, then
           one query with the default 5 s deadline: its status and time,
           with the default --slice-ms (batches give their worker back)
           and with --slice-ms 60000 (they keep it: the query waits in the
           queue, and its deadline runs from its arrival).

Standard library only. Each part runs for at most ~20 s of wall time; the
numbers are wall-clock and noisy on a shared machine (re-run on a quiet
one).
"""
import argparse
import http.client
import json
import os
import resource
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Pathd:
    def __init__(self, binary, *args):
        self.port = free_port()
        self.proc = subprocess.Popen([binary, "--bind", "127.0.0.1", "--port", str(self.port), *args],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                if self.request("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise SystemExit("pathd did not start")

    def request(self, method, path, body=None, ctype="application/json", port=None, timeout=30):
        c = http.client.HTTPConnection("127.0.0.1", port or self.port, timeout=timeout)
        try:
            c.request(method, path, body=body, headers={"Content-Type": ctype} if body else {})
            r = c.getresponse()
            return r.status, r.read(), r.getheader("Location")
        finally:
            c.close()

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def open_map(w, h):
    """A Moving AI .map text (text/x-movingai-map) of open ground."""
    return f"type octile\nheight {h}\nwidth {w}\nmap\n" + "".join("." * w + "\n" for _ in range(h))


def close_code(s):
    """Reads the server's frames (the pongs it kept) up to its close frame."""
    s.settimeout(10)
    buf = b""
    while True:
        while len(buf) < 10:
            try:
                k = s.recv(1 << 16)
            except OSError:
                return None
            if not k:
                return None
            buf += k
        op, n, at = buf[0] & 15, buf[1] & 127, 2
        if n == 126:
            n, at = struct.unpack(">H", buf[2:4])[0], 4
        elif n == 127:
            n, at = struct.unpack(">Q", buf[2:10])[0], 10
        while len(buf) < at + n:
            k = s.recv(1 << 16)
            if not k:
                return None
            buf += k
        if op == 8:
            return struct.unpack(">H", buf[at:at + 2])[0] if n >= 2 else 1005
        buf = buf[at + n:]


def ping(binary):
    srv = Pathd(binary)
    try:
        st, _, _ = srv.request("PUT", "/v1/maps/m", open_map(10, 3), "text/x-movingai-map")
        assert st == 201, st
        st, body, loc = srv.request("POST", "/v1/maps/m/sessions",
                                    json.dumps({"start": [0, 0], "goal": [9, 2]}))
        assert st == 201, (st, body)
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.sendall((f"GET {loc}/stream HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                   "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(1)
        assert head.startswith(b"HTTP/1.1 101"), head[:80]
        frame = bytes([0x89, 0x80 | 125]) + b"\0\0\0\0" + b"p" * 125  # mask 0
        buf = frame * 8192
        before = srv.rss_kib()
        peak = [before]
        done = threading.Event()

        def sample():
            while not done.is_set():
                peak[0] = max(peak[0], srv.rss_kib())
                time.sleep(0.02)

        t = threading.Thread(target=sample)
        t.start()
        sent, t0, err = 0, time.monotonic(), None
        s.settimeout(10)
        try:
            while sent < 100 << 20:
                s.sendall(buf)
                sent += len(buf)
        except OSError as e:  # the server closed the stream (1008) and stopped reading
            err = e
        took = time.monotonic() - t0
        time.sleep(0.2)
        done.set()
        t.join()
        after = srv.rss_kib()
        code = close_code(s)
        print(f"ping: sent {sent / 2**20:.0f} MB of pings in {took:.1f} s without reading"
              f"{' (then: ' + type(err).__name__ + ')' if err else ''}; server RSS {before} KiB"
              f" -> peak {peak[0]} KiB (+{peak[0] - before} KiB), {after} KiB after;"
              f" cap 16 MiB (--ws-max-outbound); the stream's close code: {code}")
        s.close()
    finally:
        srv.stop()


def slowloris(binary, n=1100, hold_s=8.0):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4096)), hard))
    hport = free_port()
    srv = Pathd(binary, "--health-port", str(hport))
    socks = []
    try:
        for i in range(n):
            s = socket.socket()
            s.bind((f"127.0.0.{2 + i % 9}", 0))
            s.setblocking(False)
            try:
                s.connect(("127.0.0.1", srv.port))
            except BlockingIOError:
                pass
            socks.append(s)
        time.sleep(0.5)
        for s in socks:
            try:
                s.send(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
            except OSError:
                pass
        t_end = time.monotonic() + hold_s
        health, api, api_fail = [], [], 0
        while time.monotonic() < t_end:
            for s in socks:  # one byte a round: never idle
                try:
                    s.send(b"a")
                except OSError:
                    pass
            t0 = time.monotonic()
            st, _, _ = srv.request("GET", "/healthz", port=hport, timeout=5)
            health.append((time.monotonic() - t0) * 1e3 if st == 200 else float("inf"))
            t0 = time.monotonic()
            try:
                st, _, _ = srv.request("GET", "/healthz", timeout=1)
                api.append((time.monotonic() - t0) * 1e3 if st == 200 else float("inf"))
            except OSError:
                api_fail += 1
            time.sleep(0.25)
        _, body, _ = srv.request("GET", "/metrics", port=hport)
        conns = [l for l in body.decode().split("\n") if l.startswith("pathd_connections ")]
        api_s = (f"median {statistics.median(api):.2f} ms, max {max(api):.2f} ms"
                 if api else "none")
        print(f"slowloris: {n} trickling connections from 9 addresses"
              f" ({conns[0] if conns else '?'}): /healthz on --health-port median"
              f" {statistics.median(health):.2f} ms, max {max(health):.2f} ms ({len(health)}"
              f" probes); on --port {len(api)} answered ({api_s}), {api_fail} not within 1 s")
    finally:
        for s in socks:
            s.close()
        srv.stop()


def deadline(binary):
    queries = ",".join(
        json.dumps({"start": [0, i % 100], "goal": [511, 511 - i % 100], "algorithm": "dijkstra",
                    "cache": False}) for i in range(3000))
    batch = '{"deadline_ms":3600000,"queries":[' + queries + "]}"
    for slice_args in ([], ["--slice-ms", "60000"]):
        srv = Pathd(binary, "--workers", "2", "--max-batch", "100000", "--max-deadline-ms",
                    "3600000", *slice_args)
        slow = []
        try:
            st, _, _ = srv.request("PUT", "/v1/maps/open", open_map(512, 512), "text/x-movingai-map")
            assert st == 201, st
            for _ in range(2):
                s = socket.create_connection(("127.0.0.1", srv.port))
                s.sendall((f"POST /v1/maps/open/paths HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
                           f"application/json\r\nContent-Length: {len(batch)}\r\n\r\n" +
                           batch).encode())
                slow.append(s)
            for _ in range(200):  # both batches running
                info = json.loads(srv.request("GET", "/v1/info")[1])
                if info["pool"]["running"] >= 2:
                    break
                time.sleep(0.05)
            t0 = time.monotonic()
            st, body, _ = srv.request(
                "POST", "/v1/maps/open/path",
                json.dumps({"start": [0, 0], "goal": [300, 300], "algorithm": "astar",
                            "cache": False}), timeout=120)
            took = time.monotonic() - t0
            what = " ".join(slice_args) or "default --slice-ms (10)"
            code = json.loads(body).get("error", {}).get("code", "") if st != 200 else ""
            print(f"deadline: {what}: a 5 s-deadline query behind two hour-long batches answered"
                  f" {st}{' ' + code if code else ''} after {took:.2f} s")
        finally:
            for s in slow:
                s.close()
            srv.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pathd", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                    "pathd"))
    ap.add_argument("parts", nargs="*", default=["ping", "slowloris", "deadline"])
    a = ap.parse_args()
    for p in a.parts:
        {"ping": ping, "slowloris": slowloris, "deadline": deadline}[p](a.pathd)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
