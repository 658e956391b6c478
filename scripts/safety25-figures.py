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

Run it once with the binary before a change and once after, side by side.
Standard library only; numbers are wall-clock and noisy on a shared machine.
"""
import argparse
import http.client
import json
import socket
import subprocess
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
        for _ in range(400):
            try:
                if self.request("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise SystemExit("pathd did not start")

    def request(self, method, path, body=None, ctype="application/json", timeout=600, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            h = dict(headers or {})
            if body is not None:
                h["Content-Type"] = ctype
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            return r.status, r.read(), r.getheader("Location")
        finally:
            c.close()

    def info(self):
        return json.loads(self.request("GET", "/v1/info")[1])

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def open_map(w, h):
    """A Moving AI .map text (text/x-movingai-map) of open ground."""
    return f"type octile\nheight {h}\nwidth {w}\nmap\n" + "".join("." * w + "\n" for _ in range(h))


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pathd", default="build/pathd")
    ap.add_argument("parts", nargs="*", default=["writes"])
    a = ap.parse_args()
    for p in a.parts:
        globals()[p](a.pathd)


if __name__ == "__main__":
    main()
