#!/usr/bin/env python3
"""safety25-figures.py -- the closing figures of issue 25 (the items of
branch safety25), measured against a pathd binary this script starts itself
on free loopback ports.

    scripts/safety25-figures.py [--pathd build/pathd] [writes] [crowdstream]
                                [slowreaders] [tables] [sighup] [params]

writes       8 client threads send path queries (Dijkstra across a 512x512
             map, cache off) from one address for the whole run; meanwhile
             a tiny PUT, a PATCH, a session create and a DELETE are sent one
             after the other: the wall time of each, and the queries
             answered while it waited.
params       GET /healthz with 450, 470 and 600 query parameters, and 64 in
             a 31 KB target: status and wall time.
crowdstream  a crowd ticking at 20 Hz, its WebSocket stream read for 3 s:
             frames received, and the first error or close.
tables       two 100x100 tables across a wall on a 1024x1024 map (every
             pair unreachable) on a 2-worker server, while another client
             sends 19 path queries: each table's time and cells, the
             queries' statuses.
slowreaders  120 connections ask for a cached 7 MB flow field and never
             read: server RSS before and after, answers 200 / 503, and
             /healthz's time meanwhile.
sighup       a /v1/stream opened with a token the file then loses (SIGHUP):
             what a get over it answers.
steps        one worker: 600 steps of a 400-agent crowd, and a path query
             sent while they run: the time of each.

Run it once with the binary before a change and once after, side by side.
Standard library only; numbers are wall-clock and noisy on a shared machine.
"""
import argparse
import http.client
import importlib.util
import json
import os
import signal
import socket
import struct
import sys
import tempfile
import threading
import time


def _issue12_helpers():
    """scripts/safety-figures.py (issue 12's figures): its pathd launcher,
    free_port and open_map are reused here."""
    sys.dont_write_bytecode = True  # no __pycache__ written into the tree
    spec = importlib.util.spec_from_file_location(
        "safety_figures", os.path.join(os.path.dirname(os.path.abspath(__file__)), "safety-figures.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_sf = _issue12_helpers()
open_map = _sf.open_map


class Pathd(_sf.Pathd):
    """issue 12's launcher, with request headers and /v1/info."""

    def request(self, method, path, body=None, ctype="application/json", port=None, timeout=600,
                headers=None):
        c = http.client.HTTPConnection("127.0.0.1", port or self.port, timeout=timeout)
        try:
            h = dict(headers or {})
            if body is not None:
                h["Content-Type"] = ctype
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            return r.status, r.read(), r.getheader("Location")
        finally:
            c.close()

    def info(self, token=None):
        h = {"Authorization": "Bearer " + token} if token else None
        return json.loads(self.request("GET", "/v1/info", headers=h)[1])


ROOM = json.dumps({"rows": ["..........", "..........", ".........."]})


def writes(binary):
    srv = Pathd(binary, "--workers", "2")
    stop = threading.Event()
    answered = [0]
    lock = threading.Lock()
    try:
        assert srv.request("PUT", "/v1/maps/open", open_map(512, 512), "text/x-movingai-map")[0] == 201
        assert srv.request("PUT", "/v1/maps/m", ROOM)[0] == 201
        assert srv.request("PUT", "/v1/maps/gone", ROOM)[0] == 201
        body = json.dumps({"start": [0, 0], "goal": [511, 511], "algorithm": "dijkstra",
                           "cache": False})

        def client():
            while not stop.is_set():
                try:
                    st = srv.request("POST", "/v1/maps/open/path", body, timeout=120)[0]
                except OSError:
                    continue
                if st == 200:
                    with lock:
                        answered[0] += 1

        threads = [threading.Thread(target=client) for _ in range(8)]
        for t in threads:
            t.start()
        time.sleep(2)
        steps = [("PUT tiny map", "PUT", "/v1/maps/w", ROOM),
                 ("PATCH", "PATCH", "/v1/maps/m", json.dumps({"cells": [{"x": 0, "y": 0, "cost": 0}]})),
                 ("session create", "POST", "/v1/maps/m/sessions",
                  json.dumps({"start": [1, 1], "goal": [9, 2]})),
                 ("DELETE", "DELETE", "/v1/maps/gone", None)]
        for name, method, path, b in steps:
            with lock:
                a0 = answered[0]
            t0 = time.monotonic()
            try:
                st = srv.request(method, path, b, timeout=300)[0]
            except OSError as e:
                st = f"no answer ({e})"
            took = time.monotonic() - t0
            with lock:
                a1 = answered[0]
            print(f"writes: {name:15s} {st} in {took:7.3f} s, {a1 - a0:5d} queries answered meanwhile")
        i = srv.info()["pool"]
        print(f"writes: pool completed {i.get('completed')}, writes_ahead {i.get('writes_ahead', '-')}, "
              f"requeued {i.get('requeued')}")
    finally:
        stop.set()
        srv.stop()


def ws_open(port, path, token=None):
    s = socket.create_connection(("127.0.0.1", port))
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    s.sendall((f"GET {path} HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
               f"Sec-WebSocket-Version: 13\r\n{auth}\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head[:120]
    return s


def ws_send(s, text):
    data = text.encode()
    hdr = bytes([0x81])
    if len(data) < 126:
        hdr += bytes([0x80 | len(data)])
    else:
        hdr += bytes([0x80 | 126]) + struct.pack(">H", len(data))
    s.sendall(hdr + b"\0\0\0\0" + data)  # mask 0: the payload as it is


def ws_recv(s, timeout=10):
    """(opcode, payload), or (None, None) on EOF or timeout."""
    s.settimeout(timeout)

    def need(n):
        b = b""
        while len(b) < n:
            k = s.recv(n - len(b))
            if not k:
                raise EOFError
            b += k
        return b
    try:
        h = need(2)
        n = h[1] & 127
        if n == 126:
            n = struct.unpack(">H", need(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", need(8))[0]
        return h[0] & 15, need(n)
    except (EOFError, OSError):
        return None, None


def params(binary):
    srv = Pathd(binary, "--request-timeout", "10")
    try:
        for n, pad in ((450, 0), (470, 0), (600, 0), (64, 31000)):
            q = "&".join(f"p{i}=1" for i in range(n - (1 if pad else 0)))
            if pad:
                q += "&pad=" + "x" * pad
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.settimeout(30)
            t0 = time.monotonic()
            s.sendall(f"GET /healthz?{q} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
            try:
                d = s.recv(64)
            except OSError:
                d = b""
            took = time.monotonic() - t0
            st = d.split(b"\r\n")[0].decode() if d else "no answer (closed)"
            print(f"params: {n:4d} parameters{' in a 31 KB target' if pad else ''}: {st} in {took:.2f} s")
            s.close()
    finally:
        srv.stop()


def nav_open(w, h):
    return json.dumps({"kind": "navmesh", "from_grid": open_map(w, h)})


def crowdstream(binary):
    srv = Pathd(binary)
    try:
        assert srv.request("PUT", "/v1/maps/n", nav_open(40, 10))[0] == 201
        st, body, loc = srv.request("POST", "/v1/maps/n/crowds", json.dumps(
            {"tick_hz": 20, "agents": [{"position": [2, 0, 5], "target": [38, 0, 5]}]}))
        assert st == 201, (st, body)
        s = ws_open(srv.port, loc + "/stream")
        frames, end, t0 = 0, "none", time.monotonic()
        while time.monotonic() - t0 < 3:
            op, data = ws_recv(s, 5)
            if op is None:
                end = "connection closed"
                break
            if op == 8:
                end = f"close {struct.unpack('>H', data[:2])[0] if len(data) >= 2 else '-'}"
                break
            if op == 1:
                j = json.loads(data)
                if "error" in j:
                    end = "error " + j["error"]["code"]
                    break
                frames += 1
        print(f"crowdstream: {frames} frames in {time.monotonic() - t0:.2f} s, end: {end}; "
              f"the crowd over HTTP: {srv.request('GET', loc)[0]}")
        s.close()
    finally:
        srv.stop()


def split_map(w, h):
    return f"type octile\nheight {h}\nwidth {w}\nmap\n" + "".join(
        ("@" if y == h // 2 else ".") * w + "\n" for y in range(h))


def tables(binary):
    srv = Pathd(binary, "--workers", "2", "--max-deadline-ms", "600000")
    try:
        assert srv.request("PUT", "/v1/maps/split", split_map(1024, 1024), "text/x-movingai-map")[0] == 201
        assert srv.request("PUT", "/v1/maps/room", ROOM)[0] == 201
        body = json.dumps({"sources": [[i * 10, 3] for i in range(100)],
                           "targets": [[i * 10, 1020] for i in range(100)],
                           "deadline_ms": 600000})
        out = []

        def table(k):
            t0 = time.monotonic()
            st, b, _ = srv.request("POST", "/v1/maps/split/table", body, timeout=900)
            j = json.loads(b) if st == 200 else {}
            out.append(f"table {k}: {st} in {time.monotonic() - t0:.2f} s, "
                       f"{j.get('stats', {}).get('expanded', '-')} cells, "
                       f"{j.get('stats', {}).get('searches', '-')} searches")
        th = [threading.Thread(target=table, args=(k,)) for k in range(2)]
        for t in th:
            t.start()
        time.sleep(0.5)
        sts = []
        for _ in range(19):
            try:
                st = srv.request("POST", "/v1/maps/room/path",
                                 json.dumps({"start": [0, 0], "goal": [9, 2], "cache": False}),
                                 timeout=60)[0]
            except OSError:
                st = "no answer"
            sts.append(st)
        for t in th:
            t.join()
        for line in out:
            print("tables: " + line)
        print(f"tables: 19 queries from another client meanwhile: "
              f"{sum(1 for x in sts if x == 200)} x 200, {sum(1 for x in sts if x == 504)} x 504")
    finally:
        srv.stop()


def slowreaders(binary):
    srv = Pathd(binary, "--max-per-ip", "0", "--max-connections", "1024")
    socks = []
    try:
        assert srv.request("PUT", "/v1/maps/big", open_map(1024, 1024), "text/x-movingai-map")[0] == 201
        body = json.dumps({"goal": [0, 0]})
        st, b, _ = srv.request("POST", "/v1/maps/big/flowfield", body)
        assert st == 200
        rss0 = srv.rss_kib()
        codes = {}
        for _ in range(120):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", srv.port))
            s.sendall((f"POST /v1/maps/big/flowfield HTTP/1.1\r\nHost: localhost\r\n"
                       f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}").encode())
            s.settimeout(30)
            line = s.recv(12)
            codes[line[9:12].decode()] = codes.get(line[9:12].decode(), 0) + 1
            socks.append(s)
        time.sleep(1)
        rss1 = srv.rss_kib()
        t0 = time.monotonic()
        hz = srv.request("GET", "/healthz")[0]
        took = time.monotonic() - t0
        i = srv.info()
        print(f"slowreaders: a {len(b) / 1e6:.1f} MB answer x 120 unread: {codes}; RSS "
              f"{rss0 / 1024:.0f} -> {rss1 / 1024:.0f} MB; counted "
              f"{i.get('connections', {}).get('answers_bytes', '-')} bytes held; "
              f"/healthz {hz} in {took * 1e3:.0f} ms")
    finally:
        for s in socks:
            s.close()
        srv.stop()


def sighup(binary):
    d = tempfile.mkdtemp()
    tok_a, tok_w = "token-a-0123456789abcdefXYZ", "writer-token-0123456789abcd"
    path = os.path.join(d, "tokens")
    with open(path, "w") as f:
        f.write(f"read {tok_a}\nwrite {tok_w}\n")
    srv = Pathd(binary, "--auth-token-file", path)
    try:
        st = srv.request("PUT", "/v1/maps/room", ROOM, headers={"Authorization": "Bearer " + tok_w})[0]
        assert st == 201, st
        s = ws_open(srv.port, "/v1/stream", tok_a)
        ws_send(s, json.dumps({"op": "create", "map": "room", "create": {"start": [0, 0], "goal": [9, 2]}}))
        op, data = ws_recv(s)
        sid = json.loads(data)["session"]
        with open(path, "w") as f:
            f.write(f"write {tok_w}\n")
        os.kill(srv.proc.pid, signal.SIGHUP)
        for _ in range(200):
            if srv.request("GET", "/v1/maps", headers={"Authorization": "Bearer " + tok_a})[0] == 401:
                break
            time.sleep(0.05)
        ws_send(s, json.dumps({"op": "get", "map": "room", "session": sid}))
        op, data = ws_recv(s)
        got = (json.loads(data).get("status") or json.loads(data).get("error", {}).get("code")) if op == 1 else op
        ws_send(s, json.dumps({"op": "create", "map": "room", "create": {"start": [0, 0], "goal": [9, 2]}}))
        op2, data2 = ws_recv(s)
        got2 = (json.loads(data2).get("status") or json.loads(data2).get("error", {}).get("code")) if op2 == 1 else (
            f"close {struct.unpack('>H', data2[:2])[0]}" if op2 == 8 else "closed")
        print(f"sighup: after the token's removal, HTTP 401; over its open /v1/stream a get: {got}, "
              f"then a create: {got2}")
        s.close()
    finally:
        srv.stop()


def steps(binary):
    srv = Pathd(binary, "--workers", "1")
    try:
        assert srv.request("PUT", "/v1/maps/n", nav_open(60, 60))[0] == 201
        assert srv.request("PUT", "/v1/maps/room", ROOM)[0] == 201
        agents = [{"position": [2.5 + i % 20 * 2, 0, 2.5 + i // 20 * 2],
                   "target": [57.5 - i % 20 * 2, 0, 57.5 - i // 20 * 2]} for i in range(400)]
        st, body, loc = srv.request("POST", "/v1/maps/n/crowds",
                                    json.dumps({"max_agents": 400, "agents": agents}))
        assert st == 201, (st, body[:200])
        out = {}

        def step():
            t0 = time.monotonic()
            out["steps"] = (srv.request("POST", loc + "/step", json.dumps({"steps": 600, "dt": 0.05}))[0],
                            time.monotonic() - t0)
        t = threading.Thread(target=step)
        t.start()
        time.sleep(0.3)
        t0 = time.monotonic()
        q = srv.request("POST", "/v1/maps/room/path",
                        json.dumps({"start": [0, 0], "goal": [9, 2], "cache": False}))[0]
        qt = time.monotonic() - t0
        t.join()
        print(f"steps: 600 steps of 400 agents: {out['steps'][0]} in {out['steps'][1]:.2f} s; "
              f"a path query sent 0.3 s in: {q} in {qt:.3f} s")
    finally:
        srv.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pathd", default="build/pathd")
    ap.add_argument("parts", nargs="*", default=["writes"])
    a = ap.parse_args()
    for p in a.parts:
        globals()[p](a.pathd)


if __name__ == "__main__":
    main()
