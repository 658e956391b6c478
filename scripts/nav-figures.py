#!/usr/bin/env python3
"""nav-figures.py -- the closing figures of issues 27 (navmesh build side)
and 25 (items 1, 5 and 9), measured against a pathd binary this script
starts itself on a free loopback port.

    scripts/nav-figures.py [--pathd build/pathd] [--mesh DIR] [part ...]

stack400    400 closed floor slabs stacked 0.1 apart, uploaded with
            cell_height 0.01: status, error field and time to the answer,
            with the default limits and --nav-build-ms 60000, and again
            with --nav-build-ms 2000 and the span limits raised (so the
            deadline is what stops it).
patch65536  a PATCH of 65,536 box obstacles on a small level: status,
            field, time to the answer.
boxes65536  an upload of a 20 x 20 floor with 65,536 area boxes over it:
            status, field, time.
obstacle    per-obstacle PATCH cost on nav_test.obj (RecastDemo's settings,
            tiles of 32): 40 rounds of a cylinder (radius 0.5) put at a
            random point of the mesh then removed; the build_us the PATCH
            answers carry, p50 and p90, and the tiles rebuilt.
types       nav_test.obj with 0, 1 and 2 agent types besides "default":
            build_us and memory_bytes of each upload.
memory      maps (300 x 300 floors) up to 60% of a 128 MiB budget, then
            crowds of 2,000 agents until refused: charged vs RSS.
floors2048  issue 25 item 5's case: nine uploads of one 2048 x 2048 floor
            (a two-triangle OBJ, tiles of 64) with a 512 MiB budget and the
            build deadline raised to 600 s: each answer, charged vs RSS.

Standard library only. Times are wall clock on a shared machine: compare
runs side by side (old and new binaries), not with figures from elsewhere.
Parts needing settings an older binary lacks use the ones it has.
"""
import argparse
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary, args):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1"] + args,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                self.call("GET", "/healthz")
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("pathd did not start")

    def call(self, method, path, body=None, ctype="application/json", timeout=600):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        headers = {"Content-Type": ctype} if body is not None else {}
        if isinstance(body, str):
            body = body.encode()
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        data = r.read()
        c.close()
        try:
            return r.status, json.loads(data) if data else None
        except ValueError:
            return r.status, None

    def timed(self, method, path, body=None, ctype="application/json"):
        t0 = time.monotonic()
        st, j = self.call(method, path, body, ctype)
        return st, j, time.monotonic() - t0

    def rss_kib(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return -1

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)


def box(out, nv, x0, y0, z0, x1, y1, z1):
    for i in range(8):
        out.append("v %g %g %g" % (x1 if i & 1 else x0, y1 if i & 4 else y0, z1 if i & 2 else z0))
    for q in ((4, 6, 7, 5), (0, 1, 3, 2), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)):
        out.append("f %d %d %d %d" % tuple(nv + 1 + k for k in q))
    return nv + 8


def field(j):
    return ((j or {}).get("error") or {}).get("field")


def stack400(binary):
    lines, nv = [], 0
    for i in range(400):
        nv = box(lines, nv, 0, i * 0.1 - 0.05, 0, 40, i * 0.1, 40)
    obj = "\n".join(lines) + "\n"
    for args in (["--nav-build-ms", "60000"],
                 ["--nav-build-ms", "2000", "--nav-max-column-spans", "16383",
                  "--nav-max-tile-spans", "16777216"]):
        s = Server(binary, args)
        try:
            st, j, dt = s.timed("PUT", "/v1/maps/stack?cell_height=0.01", obj, "model/obj")
        finally:
            s.stop()
        print("stack400 %s: %d %s in %.2f s" % (" ".join(args), st, field(j), dt))


def small_level():
    lines, nv = [], 0
    nv = box(lines, nv, 0, -0.5, 0, 30, 0, 10)
    nv = box(lines, nv, 14.5, 0, 0, 15.5, 3, 4.4)
    nv = box(lines, nv, 14.5, 0, 5.6, 15.5, 3, 10)
    return "\n".join(lines) + "\n"


def patch65536(binary):
    s = Server(binary, [])
    try:
        st, _ = s.call("PUT", "/v1/maps/w", small_level(), "model/obj")
        obs = [{"id": "o%d" % i, "box": {"min": [i % 28, -1, i % 9], "max": [i % 28 + 1, 1, i % 9 + 1]}}
               for i in range(65536)]
        st, j, dt = s.timed("PATCH", "/v1/maps/w", json.dumps({"obstacles": obs}))
    finally:
        s.stop()
    print("patch65536: %d %s in %.2f s" % (st, field(j), dt))


def boxes65536(binary):
    lines, nv = [], 0
    box(lines, nv, 0, -0.5, 0, 20, 0, 20)
    env = {"kind": "navmesh", "obj": "\n".join(lines) + "\n",
           "areas": [{"id": "mud", "boxes": [{"min": [0, -1, 0], "max": [20, 1, 20]}] * 65536}]}
    s = Server(binary, [])
    try:
        st, j, dt = s.timed("PUT", "/v1/maps/mud", json.dumps(env))
    finally:
        s.stop()
    print("boxes65536: %d %s in %.2f s" % (st, field(j), dt))


DEMO = "cell_size=0.3&cell_height=0.2&agent_radius=0.6&agent_height=2&agent_max_climb=0.9" \
       "&agent_max_slope=45&tile_size=32&edge_max_error=1.3"


def obstacle(binary, mesh):
    obj = open(os.path.join(mesh, "nav_test.obj")).read()
    s = Server(binary, [])
    rng = random.Random(7)
    times, rebuilt = [], []
    try:
        st, j = s.call("PUT", "/v1/maps/t?" + DEMO, obj, "model/obj")
        assert st == 201, (st, j)
        bmin, bmax = j["navmesh"]["bounds"]["min"], j["navmesh"]["bounds"]["max"]
        n = 0
        while n < 40:
            x = rng.uniform(bmin[0], bmax[0])
            z = rng.uniform(bmin[2], bmax[2])
            st, p = s.call("POST", "/v1/maps/t/path", json.dumps(
                {"start": [x, bmin[1] + 4, z], "goal": [x, bmin[1] + 4, z], "search_box": [1, 20, 1]}))
            if st != 200:
                continue
            c = p["path"][0]
            st, j = s.call("PATCH", "/v1/maps/t", json.dumps(
                {"obstacles": [{"id": "c", "cylinder": {"base": [c[0], c[1] - 0.5, c[2]], "radius": 0.5,
                                                        "height": 2}}]}))
            assert st == 200, (st, j)
            times.append(j["build_us"] / 1000.0)
            rebuilt.append(j["navmesh"]["tiles"]["rebuilt"])
            st, j = s.call("PATCH", "/v1/maps/t", json.dumps({"remove_obstacles": ["c"]}))
            assert st == 200, (st, j)
            times.append(j["build_us"] / 1000.0)
            n += 1
    finally:
        s.stop()
    times.sort()
    print("obstacle: %d PATCHes on nav_test.obj, build_us p50 %.2f ms p90 %.2f ms max %.2f ms, "
          "%.1f tiles rebuilt per change" % (len(times), statistics.median(times),
                                             times[int(0.9 * (len(times) - 1))], times[-1],
                                             statistics.mean(rebuilt)))


def types(binary, mesh):
    obj = open(os.path.join(mesh, "nav_test.obj")).read()
    s = Server(binary, [])
    try:
        for k, extra in enumerate(("", "&agent_types=small:0.3,1,0.5,50",
                                   "&agent_types=small:0.3,1,0.5,50;big:1.2,2.5,0.9,30")):
            st, j = s.call("PUT", "/v1/maps/t%d?%s%s" % (k, DEMO, extra), obj, "model/obj")
            if st != 201:
                print("types %d: %d %s" % (k, st, field(j)))
                continue
            print("types: %d agent types, build %.1f ms, memory_bytes %d" %
                  (k + 1, j["build_us"] / 1000.0, j["memory_bytes"]))
    finally:
        s.stop()


def memory(binary):
    s = Server(binary, ["--max-memory", "134217728", "--max-maps", "1000", "--max-crowds", "1000",
                        "--max-crowds-per-map", "1000", "--max-crowd-agents", "2000"])
    try:
        s.call("GET", "/v1/info")
        base = s.rss_kib()
        maps = crowds = 0
        for i in range(200):
            lines, nv = [], 0
            nv = box(lines, nv, 0, -0.5, 0, 300, 0, 300)
            for k in range(6):
                nv = box(lines, nv, 20 + 40 * k, 0, 10 + i, 22 + 40 * k, 3, 200 + i)
            st, _ = s.call("PUT", "/v1/maps/m%d?tile_size=64" % i, "\n".join(lines) + "\n", "model/obj")
            if st != 201:
                break
            maps += 1
            _, info = s.call("GET", "/v1/info")
            if info["memory"]["used_bytes"] > 0.6 * info["memory"]["budget_bytes"]:
                break
        for i in range(1000):
            st, _ = s.call("POST", "/v1/maps/m%d/crowds" % (i % maps), json.dumps({"max_agents": 2000}))
            if st != 201:
                break
            crowds += 1
        _, info = s.call("GET", "/v1/info")
        rss = s.rss_kib()
    finally:
        s.stop()
    used = info["memory"]["used_bytes"]
    print("memory: %d maps, %d crowds; charged %.1f MB (maps %.1f, crowds %.1f); RSS %.1f MB over "
          "a %.1f MB baseline: %.2f x charged" %
          (maps, crowds, used / 1e6, info["memory"]["maps_bytes"] / 1e6,
           info["memory"]["crowds_bytes"] / 1e6, rss * 1024 / 1e6, base * 1024 / 1e6,
           (rss - base) * 1024 / used))


def floors2048(binary):
    # The build deadline raised: what is measured here is memory.
    s = Server(binary, ["--max-memory", "536870912", "--max-maps", "100",
                        "--nav-build-ms", "600000"])
    try:
        base = s.rss_kib()
        obj = "v 0 0 0\nv 2048 0 0\nv 2048 0 2048\nv 0 0 2048\nf 1 4 3\nf 1 3 2\n"
        for i in range(9):
            st, j, dt = s.timed("PUT", "/v1/maps/f%d?tile_size=64" % i, obj, "model/obj")
            _, info = s.call("GET", "/v1/info")
            rss = s.rss_kib()
            used = info["memory"]["used_bytes"]
            print("floors2048 upload %d: %d%s in %.1f s; charged %.1f MB, RSS %.1f MB over a "
                  "%.1f MB baseline: %.2f x charged" %
                  (i + 1, st, "" if st == 201 else " " + str(field(j)), dt, used / 1e6,
                   (rss - base) * 1024 / 1e6, base * 1024 / 1e6,
                   (rss - base) * 1024 / used if used else float("nan")), flush=True)
    finally:
        s.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pathd", default="build/pathd")
    ap.add_argument("--mesh", default=os.environ.get("PATHD_MESH_DIR",
                                                     "../shared/benchmarks/meshes"))
    ap.add_argument("parts", nargs="*",
                    default=["stack400", "patch65536", "boxes65536", "obstacle", "types", "memory"])
    a = ap.parse_args()
    for p in a.parts:
        if p in ("obstacle", "types"):
            globals()[p](a.pathd, a.mesh)
        else:
            globals()[p](a.pathd)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
