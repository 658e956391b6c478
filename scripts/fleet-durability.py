#!/usr/bin/env python3
"""fleet-durability.py -- what a fleet keeps when its Redis dies, and how
long a write waits on a Redis that stalls (issue 25, item 8). Starts its own
redis-server and pathd instances on free loopback ports.

    scripts/fleet-durability.py [--pathd build/pathd] [--persistence none|aof|rdb]
                                [--uploads 2046] [--arg=--store-accept-volatile ...]
                                [lose] [sleep]

lose   two instances (a, b) share one redis-server; --uploads maps are
       uploaded through them (8 clients, alternating instances) and two of
       them PATCHed 5 times; then redis-server is killed with SIGKILL and
       restarted on its port and folder (with the same persistence). Counts
       what was acknowledged, what each instance and the store (a third
       instance that held nothing) still serve at the acknowledged
       version, and what /readyz and the logs say.
sleep  one instance with --store-timeout-ms 2000; redis-server is put to
       sleep with DEBUG SLEEP 5 while 8 clients send writes (PATCHes of one
       map, PUTs of others); for each answer its status, code and time; then
       whether the PATCHes answered 503 were applied.

Standard library only; needs redis-server and redis-cli. Times are wall
clock on a shared machine: noisy, so each figure says what it measured.
"""
import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, headers=None, timeout=60):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        h = dict(headers or {})
        if body is not None:
            h["Content-Type"] = "application/json"
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        return r.status, dict(r.getheaders()), data
    finally:
        c.close()


def code_of(data):
    try:
        return json.loads(data)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return ""


class Redis:
    def __init__(self, persistence, port=None, folder=None):
        self.port = port or free_port()
        self.dir = folder or tempfile.mkdtemp(prefix="fleet-durability-redis-")
        FOLDERS.append(self.dir)
        self.persistence = persistence
        self.start()

    def start(self):
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                "--loglevel", "warning", "--enable-debug-command", "local"]
        if self.persistence == "aof":
            args += ["--appendonly", "yes", "--appendfsync", "everysec", "--save", ""]
        elif self.persistence == "rdb":
            args += ["--appendonly", "no", "--save", "60 1000"]
        else:
            args += ["--appendonly", "no", "--save", ""]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        STARTED.append(self.proc)
        for _ in range(400):
            if self.cli("PING") == "PONG":
                return
            time.sleep(0.025)
        raise SystemExit("redis-server did not start")

    def cli(self, *args):
        r = subprocess.run(["redis-cli", "-p", str(self.port), *args], capture_output=True, text=True)
        return r.stdout.strip()

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class Pathd:
    def __init__(self, binary, redis_port, name, args, log):
        self.port = free_port()
        self.name = name
        self.log = log
        self.proc = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--instance-id", name,
             "--store", f"redis://127.0.0.1:{redis_port}", *args],
            stdout=subprocess.DEVNULL, stderr=open(log, "w"))
        STARTED.append(self.proc)
        self.wait_ready(30)

    def wait_ready(self, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                if request(self.port, "GET", "/readyz")[0] == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def grid(k):
    # A 16x16 grid whose one wall cell encodes k, so every map differs.
    rows = ["." * 16 for _ in range(16)]
    x, y = 1 + k % 14, 1 + (k // 14) % 14
    rows[y] = rows[y][:x] + "#" + rows[y][x + 1:]
    return json.dumps({"rows": rows})


def part_lose(opt):
    print(f"== lose: {opt.uploads} uploads, redis persistence {opt.persistence}, "
          f"pathd args {opt.arg or '(none)'} ==")
    tmp = tempfile.mkdtemp(prefix="fleet-durability-")
    FOLDERS.append(tmp)
    redis = Redis(opt.persistence)
    inst = [Pathd(opt.pathd, redis.port, n, opt.arg, os.path.join(tmp, n + ".log")) for n in "ab"]
    acked, refused, lock = {}, {}, threading.Lock()

    def uploader(t):
        for k in range(t, opt.uploads, 8):
            mid = f"u{k:05d}"
            st, _, data = request(inst[k % 2].port, "PUT", f"/v1/maps/{mid}", grid(k))
            with lock:
                if st in (200, 201):
                    acked[mid] = json.loads(data)["version"]
                else:
                    refused[f"{st} {code_of(data)}"] = refused.get(f"{st} {code_of(data)}", 0) + 1

    threads = [threading.Thread(target=uploader, args=(t,)) for t in range(8)]
    t0 = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    upload_s = time.time() - t0
    for i, mid in enumerate(["u00000", "u00001"]):
        for c in range(5):
            body = json.dumps({"cells": [{"x": 2 + c, "y": 15, "cost": 0}]})
            st, _, data = request(inst[i].port, "PATCH", f"/v1/maps/{mid}", body)
            if st == 200:
                acked[mid] = json.loads(data)["version"]
            else:
                key = f"PATCH {st} {code_of(data)}"
                refused[key] = refused.get(key, 0) + 1
    print(f"acknowledged: {len(acked)} maps ({upload_s:.1f} s of uploads); "
          f"refused: {refused or 'none'}")
    patched = {m: acked[m] for m in ("u00000", "u00001") if m in acked}
    print(f"patched maps at: {patched}")

    redis.kill9()
    time.sleep(0.5)
    redis.start()
    t0 = time.time()
    ready = [p.wait_ready(30) for p in inst]
    # Let the followers reconnect and act (check, restore or drop).
    time.sleep(3)
    print(f"after SIGKILL and restart: /readyz 200 on a, b: {ready} "
          f"({time.time() - t0:.1f} s incl. 3 s settle)")
    fresh = Pathd(opt.pathd, redis.port, "c", opt.arg, os.path.join(tmp, "c.log"))
    for p in inst + [fresh]:
        lost = behind = 0
        for mid, v in acked.items():
            st, _, data = request(p.port, "GET", f"/v1/maps/{mid}")
            if st != 200:
                lost += 1
            elif json.loads(data)["version"] < v:
                behind += 1
        where = "the store (instance c, no copies of its own)" if p is fresh else f"instance {p.name}"
        print(f"{where}: {lost} of {len(acked)} acknowledged maps gone, {behind} at an older version")
    for p in inst:
        st, _, data = request(p.port, "GET", "/readyz")
        print(f"/readyz {p.name}: {st} {data.decode()[:600]}")
        with open(p.log) as f:
            lines = [ln.rstrip() for ln in f if "store" in ln]
        print(f"log {p.name} ({len(lines)} store lines):")
        for ln in lines[:8]:
            print("   ", ln[:300])
    st, _, data = request(inst[0].port, "GET", "/metrics")
    for ln in data.decode().splitlines():
        if ln.startswith("pathd_store_") and not ln.startswith("#"):
            print("   metric", ln)
    for p in inst + [fresh]:
        p.stop()
    redis.stop()
    shutil.rmtree(tmp, ignore_errors=True)


def part_sleep(opt):
    print("== sleep: DEBUG SLEEP 5 with --store-timeout-ms 2000, 8 writers ==")
    tmp = tempfile.mkdtemp(prefix="fleet-durability-")
    FOLDERS.append(tmp)
    redis = Redis("aof")
    p = Pathd(opt.pathd, redis.port, "a", ["--store-timeout-ms", "2000", "--workers", "4"] + opt.arg,
              os.path.join(tmp, "a.log"))
    st, h, _ = request(p.port, "PUT", "/v1/maps/m", grid(0))
    assert st == 201, st
    results, lock = [], threading.Lock()

    def writer(t):
        for i in range(3):
            t0 = time.time()
            if t % 2 == 0:
                body = json.dumps({"cells": [{"x": 1 + t, "y": 1 + i, "cost": 2}]})
                st, _, data = request(p.port, "PATCH", "/v1/maps/m", body)
                kind = "PATCH"
            else:
                st, _, data = request(p.port, "PUT", f"/v1/maps/w{t}", grid(t))
                kind = "PUT"
            with lock:
                results.append((kind, st, code_of(data), time.time() - t0))

    sleeper = threading.Thread(target=redis.cli, args=("DEBUG", "SLEEP", "5"))
    sleeper.start()
    time.sleep(0.2)
    threads = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sleeper.join()
    time.sleep(1)
    st, _, data = request(p.port, "GET", "/v1/maps/m")
    version = json.loads(data)["version"]
    patches_ok = sum(1 for r in results if r[0] == "PATCH" and r[1] == 200)
    patches_503 = sum(1 for r in results if r[0] == "PATCH" and r[1] == 503)
    by = {}
    for kind, st, code, dt in results:
        by.setdefault(f"{kind} {st} {code}", []).append(dt)
    for k, v in sorted(by.items()):
        print(f"{k}: {len(v)} answers, {min(v):.2f}..{max(v):.2f} s")
    print(f"longest answer: {max(r[3] for r in results):.2f} s")
    print(f"PATCHes: {patches_ok} answered 200, {patches_503} answered 503; map m went from "
          f"version 1 to {version}: {version - 1 - patches_ok} of the 503s were applied")
    p.stop()
    redis.stop()
    shutil.rmtree(tmp, ignore_errors=True)


STARTED = []  # every child, stopped at exit whatever happens (a closed pipe, ^C)
FOLDERS = []  # and every folder made


def stop_all():
    for proc in STARTED:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for d in FOLDERS:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pathd", default="build/pathd")
    ap.add_argument("--persistence", default="none", choices=["none", "aof", "rdb"])
    ap.add_argument("--uploads", type=int, default=2046)
    ap.add_argument("--arg", action="append", default=[], help="an extra pathd argument")
    ap.add_argument("parts", nargs="*", default=["lose", "sleep"])
    opt = ap.parse_args()
    for tool in ("redis-server", "redis-cli"):
        if not shutil.which(tool):
            sys.exit(f"fleet-durability: {tool} is not installed")
    try:
        for part in opt.parts:
            {"lose": part_lose, "sleep": part_sleep}[part](opt)
    finally:
        stop_all()


if __name__ == "__main__":
    main()
