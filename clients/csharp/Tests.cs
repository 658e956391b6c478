// Tests.cs -- clients/csharp against a real pathd (mono Tests.exe).
//
// PATHD_BIN names the server; the tests start their own instances on free
// loopback ports (--port 0, the port read from the "listening on" line).
// One line per test, then "N passed, N failed"; exit 1 on a failure. With
// an example path as the first argument, runs it against a server too.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Net.Http;
using System.Text;
using System.Text.RegularExpressions;
using System.Threading.Tasks;
using Pathd;

sealed class Server : IDisposable
{
    public Process Proc;
    public string Url;

    public static Server Start(params string[] args)
    {
        var bin = Environment.GetEnvironmentVariable("PATHD_BIN") ?? "build/pathd";
        var psi = new ProcessStartInfo(bin, "--port 0 " + string.Join(" ", args))
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
        };
        var s = new Server { Proc = Process.Start(psi) };
        var line = s.Proc.StandardOutput.ReadLine() ?? "";
        var m = Regex.Match(line, @"listening on [^:]+:(\d+)");
        if (!m.Success) throw new Exception("pathd did not start: " + line);
        s.Url = "http://127.0.0.1:" + m.Groups[1].Value;
        // Drain stdout so the child never blocks on a full pipe.
        Task.Run(() => s.Proc.StandardOutput.ReadToEnd());
        using (var probe = new PathdClient(s.Url, maxRetries: 0, timeout: TimeSpan.FromSeconds(2)))
        {
            var deadline = DateTime.UtcNow.AddSeconds(20);
            while (DateTime.UtcNow < deadline)
            {
                try
                {
                    if (probe.RequestAsync("GET", "/readyz").GetAwaiter().GetResult().Status == 200) return s;
                }
                catch (PathdException) { }
                System.Threading.Thread.Sleep(20);
            }
        }
        throw new Exception("pathd never became ready");
    }

    public int Stop()
    {
        if (!Proc.HasExited)
        {
            // SIGTERM: pathd drains and exits 0.
            Process.Start("kill", "-TERM " + Proc.Id).WaitForExit();
            Proc.WaitForExit();
        }
        return Proc.ExitCode;
    }

    public void Dispose()
    {
        if (!Proc.HasExited) Stop();
        Proc.Dispose();
    }
}

/// <summary>A redis-server child on a free loopback port, in its own folder.</summary>
sealed class Redis : IDisposable
{
    public Process Proc;
    public int Port;
    string dir;

    public static bool Installed()
    {
        using (var p = Process.Start(new ProcessStartInfo("sh", "-c \"command -v redis-server\"") { UseShellExecute = false, RedirectStandardOutput = true }))
        {
            p.StandardOutput.ReadToEnd();
            p.WaitForExit();
            return p.ExitCode == 0;
        }
    }

    static int FreePort()
    {
        var l = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        l.Start();
        var port = ((System.Net.IPEndPoint)l.LocalEndpoint).Port;
        l.Stop();
        return port;
    }

    /// <summary>One inline command; the reply text ("" when unreachable).</summary>
    public string Ask(string cmd)
    {
        try
        {
            using (var c = new System.Net.Sockets.TcpClient("127.0.0.1", Port))
            {
                c.ReceiveTimeout = 2000;
                var st = c.GetStream();
                var b = Encoding.ASCII.GetBytes(cmd + "\r\n");
                st.Write(b, 0, b.Length);
                var sb = new StringBuilder();
                var buf = new byte[4096];
                for (;;)
                {
                    int n = st.Read(buf, 0, buf.Length);
                    if (n <= 0) break;
                    sb.Append(Encoding.ASCII.GetString(buf, 0, n));
                    var m = Regex.Match(sb.ToString(), "^\\$(\\d+)\r\n");
                    if (!m.Success || sb.Length >= m.Length + int.Parse(m.Groups[1].Value)) break;
                }
                return sb.ToString();
            }
        }
        catch (Exception) { return ""; }
    }

    public static Redis Start(int replicaOf = 0)
    {
        var r = new Redis { Port = FreePort() };
        r.dir = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "pathd-cs-redis-" + Guid.NewGuid().ToString("N"));
        System.IO.Directory.CreateDirectory(r.dir);
        var args = "--port " + r.Port + " --bind 127.0.0.1 --dir " + r.dir + " --save \"\" --appendonly no" +
                   " --repl-diskless-sync-delay 0 --logfile " + System.IO.Path.Combine(r.dir, "log") +
                   (replicaOf > 0 ? " --replicaof 127.0.0.1 " + replicaOf : "");
        r.Proc = Process.Start(new ProcessStartInfo("redis-server", args) { UseShellExecute = false });
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (!r.Ask("PING").StartsWith("+PONG"))
        {
            if (DateTime.UtcNow > deadline) throw new Exception("redis-server did not start");
            System.Threading.Thread.Sleep(20);
        }
        return r;
    }

    public void Signal(string sig) { Process.Start("kill", "-" + sig + " " + Proc.Id).WaitForExit(); }

    public void Dispose()
    {
        if (!Proc.HasExited) { Signal("CONT"); Signal("KILL"); Proc.WaitForExit(); }
        Proc.Dispose();
        try { System.IO.Directory.Delete(dir, true); } catch (Exception) { }
    }
}

static partial class Tests
{
    static int passed, failed;
    static Server srv;

    const string Room = "type octile\nheight 7\nwidth 10\nmap\n" +
                        "....@.....\n....@.....\n....@.....\n....@.....\n....@.....\n..........\n..........\n";
    const string Doors = "{\"rows\":[\"..#..\",\"..#..\",\".....\"],\"doors\":{\"gate\":{\"cells\":[[2,2]],\"open\":true}}}";

    sealed class Fail : Exception { public Fail(string m) : base(m) { } }

    static void Check(bool cond, string what) { if (!cond) throw new Fail(what); }

    static async Task<T> Throws<T>(Func<Task> f, string what) where T : Exception
    {
        try { await f(); }
        catch (T e) { return e; }
        catch (Exception e) { throw new Fail(what + ": threw " + e.GetType().Name + ": " + e.Message); }
        throw new Fail(what + ": nothing thrown");
    }

    static void Run(string name, Func<Task> t)
    {
        try
        {
            t().GetAwaiter().GetResult();
            passed++;
            Console.WriteLine("ok - " + name);
        }
        catch (Exception e)
        {
            failed++;
            Console.WriteLine("not ok - " + name + ": " + (e is Fail ? e.Message : e.ToString()));
        }
    }

    static bool Adjacent(Point a, Point b)
    {
        return Math.Abs(a.X - b.X) <= 1 && Math.Abs(a.Y - b.Y) <= 1 && !(a.X == b.X && a.Y == b.Y);
    }

    static PathdClient Client(string url = null, TimeSpan? timeout = null, int retries = 2)
    {
        return new PathdClient(url ?? srv.Url, timeout: timeout ?? TimeSpan.FromSeconds(5), maxRetries: retries);
    }

    static async Task Maps()
    {
        using (var c = Client())
        {
            var m = await c.PutMapAsync("room", Room);
            Check(m.Created && m.Version == 1 && m.Width == 10 && m.WalkableCells == 65, "put");
            m = await c.PutMapAsync("room", Room);
            Check(!m.Created && m.Version == 2, "replace");
            var made = await c.CreateMapAsync(Doors, json: true);
            Check(made.Created && Regex.IsMatch(made.Id, "^m-[0-9a-f]{16}$") && made.Doors == 1, "create " + made.Id);
            Check(!(await c.CreateMapAsync(Doors, json: true)).Created, "the same bytes find the same map");
            Check((await c.GetMapAsync("room")).HasHierarchy, "get");
            var ids = (await c.ListMapsAsync()).Select(x => x.Id).ToList();
            Check(ids.SequenceEqual(ids.OrderBy(x => x, StringComparer.Ordinal)) && ids.Contains("room"), "list");

            m = await c.PatchMapAsync(made.Id, new[] { new CellChange(0, 0, 0) }, new[] { new DoorSwitch("gate", false) });
            Check(m.Version == 2 && m.WalkableCells == 11, "patch: walkable " + m.WalkableCells);
            var e = await Throws<PathdApiException>(() => c.PatchMapAsync(made.Id, null, new[] { new DoorSwitch("nosuch", true) }), "unknown door");
            Check(e.Status == 422, "unknown door status " + e.Status);

            var cells = await c.GetMapCellsAsync(made.Id);
            var copy = await c.PutMapJsonAsync("copy", cells);
            Check(copy.Created && copy.WalkableCells == 11 && copy.Doors == 1, "the export uploads back");
            var again = await c.GetMapCellsAsync("copy");
            Check(again.Substring(again.IndexOf("\"width\"")) == cells.Substring(cells.IndexOf("\"width\"")), "the same export");

            await c.DeleteMapAsync("copy");
            e = await Throws<PathdApiException>(() => c.GetMapAsync("copy"), "get after delete");
            Check(e.Status == 404 && e.Code == ErrorCode.MapNotFound && e.CodeText == "map_not_found", "404 map_not_found");
            await Throws<ArgumentException>(() => c.GetMapAsync("bad id!"), "a bad id");
            e = await Throws<PathdApiException>(() => c.PutMapAsync("bad", "type octile\n"), "malformed");
            Check(e.Status == 400 && e.Code == ErrorCode.MalformedMap, "malformed map: " + e.CodeText);
        }
    }

    static async Task Paths()
    {
        using (var c = Client())
        {
            await c.PutMapAsync("room", Room);
            var p = await c.FindPathAsync("room", new Point(0, 0), new Point(9, 0), new PathOptions { Algorithm = "astar" });
            Check(p.Found && p.Algorithm == "astar" && p.Path[0].X == 0 && p.Path[p.Path.Count - 1].X == 9, "astar");
            for (int i = 1; i < p.Path.Count; i++) Check(Adjacent(p.Path[i - 1], p.Path[i]), "step " + i);
            var raw = await c.RequestAsync("POST", "/v1/maps/room/path", "{\"start\":[0,0],\"goal\":[9,0],\"algorithm\":\"astar\"}");
            Check(raw.Body.Contains("\"cost\":" + p.Cost.ToString("R", System.Globalization.CultureInfo.InvariantCulture) + ","),
                  "the wrapper reads the answer as sent: " + raw.Body);

            double best = 0;
            var algos = new[] { "dijkstra", "astar", "jps", "hpa", "bfs" };
            for (int i = 0; i < algos.Length; i++)
            {
                var q = await c.FindPathAsync("room", new Point(0, 0), new Point(9, 6), new PathOptions { Algorithm = algos[i] });
                Check(q.Found, algos[i]);
                if (i == 0) best = q.Cost;
                Check(q.Cost >= best - 1e-9, algos[i] + " beat dijkstra");
                if (i < 3) Check(Math.Abs(q.Cost - best) < 1e-9, algos[i] + " is optimal");
            }
            await c.FindPathAsync("room", new Point(1, 0), new Point(9, 0));
            Check((await c.FindPathAsync("room", new Point(1, 0), new Point(9, 0))).Cached, "cached");
            Check(!(await c.FindPathAsync("room", new Point(1, 0), new Point(9, 0), new PathOptions { Cache = false, Smooth = true })).Cached, "cache:false");

            var e = await Throws<PathdApiException>(() => c.FindPathAsync("room", new Point(0, 0), new Point(99, 0)), "off map");
            Check(e.Status == 422 && e.Code == ErrorCode.OffMap && e.Field == "goal", "off_map goal");
            e = await Throws<PathdApiException>(() => c.FindPathAsync("room", new Point(0, 0), new Point(4, 0)), "blocked");
            Check(e.Code == ErrorCode.Blocked, "blocked");
            e = await Throws<PathdApiException>(() => c.FindPathAsync("room", new Point(0, 0), new Point(9, 0), new PathOptions { Algorithm = "teleport" }), "algorithm");
            Check(e.Code == ErrorCode.InvalidValue && e.Field == "algorithm", "invalid algorithm");

            await c.PutMapJsonAsync("walled", "{\"rows\":[\".#.\",\".#.\",\".#.\"]}");
            var u = await c.FindPathAsync("walled", new Point(0, 0), new Point(2, 2));
            Check(!u.Found && u.Reason == "unreachable" && u.Path.Count == 0, "unreachable is not an error");
        }
    }

    static async Task Batch()
    {
        using (var c = Client())
        {
            await c.PutMapAsync("room", Room);
            var b = await c.FindPathsAsync("room", new[] {
                new PathQuery(new Point(0, 0), new Point(9, 6), new PathOptions { Algorithm = "dijkstra" }),
                new PathQuery(new Point(0, 0), new Point(50, 50)),
                new PathQuery(new Point(9, 6), new Point(0, 0)),
            }, deadlineMs: 2000);
            Check(b.Results.Count == 3 && b.MapVersion >= 1, "three slots");
            Check(!b.Results[0].IsError && b.Results[0].Path.Found, "slot 0");
            Check(b.Results[1].IsError && b.Results[1].Error.Status == 422 && b.Results[1].Error.Code == ErrorCode.OffMap &&
                  b.Results[1].Error.Field == "queries[1].goal", "slot 1");
            Check(Math.Abs(b.Results[0].Path.Cost - b.Results[2].Path.Cost) < 1e-9, "a path and its reverse");
        }
    }

    static async Task Sessions()
    {
        using (var c = Client())
        {
            await c.PutMapJsonAsync("doors", Doors);
            var s = await c.CreateSessionAsync("doors", new Point(0, 0), new Point(4, 0), ttlS: 60);
            Check(Regex.IsMatch(s.SessionId, "^[0-9a-f]{32}$") && s.Found && s.TtlS == 60 && s.MapId == "doors", "create");
            Check(Math.Abs((await c.GetSessionAsync("doors", s.SessionId)).Cost - s.Cost) < 1e-9, "get");
            var shut = await c.UpdateSessionAsync("doors", s.SessionId, new Update { Doors = new List<DoorSwitch> { new DoorSwitch("gate", false) } });
            Check(!shut.Found && shut.Reason == "unreachable" && shut.Updates == 1, "gate shut");
            var nd = await c.UpdateSessionAsync("doors", s.SessionId, new[] {
                new Update { Doors = new List<DoorSwitch> { new DoorSwitch("gate", true) } },
                new Update { Position = new Point(1, 0) },
            });
            Check(nd.Found && nd.Updates == 2 && nd.Path[0].X == 1, "ndjson");
            var e = await Throws<PathdApiException>(() => c.UpdateSessionAsync("doors", s.SessionId, new[] {
                new Update { Position = new Point(1, 1) }, new Update { Position = new Point(40, 0) } }), "bad line");
            Check(e.Code == ErrorCode.OffMap && e.Field.StartsWith("lines[1]"), "bad line field " + e.Field);
            // A replanning policy on create and on an update; the short answers' fields.
            var r = await c.CreateSessionAsync("doors", new Point(0, 0), new Point(4, 0),
                                               new ReplanPolicy { GoalThreshold = 3, Hysteresis = 0.25 });
            Check(r.Found && r.Replanned && r.ReplanReason == "initial" && r.ReplanRoute == "new" &&
                  r.Policy.GoalThreshold == 3 && r.Policy.Hysteresis == 0.25 && r.Policy.MinUpdates == 0 &&
                  r.Policy.MinIntervalMs == 0, "create with a policy: " + r.ReplanReason + " " + r.ReplanRoute);
            var near = await c.UpdateSessionAsync("doors", r.SessionId, new Update { Goal = new Point(4, 1) });
            Check(near.Found && !near.Replanned && near.Expanded == 0 && near.ReplanReason == "threshold" &&
                  near.ReplanRoute == "none" && !near.Flip, "goal within the threshold: " + near.ReplanReason);
            var pol = await c.UpdateSessionAsync("doors", r.SessionId,
                                                 new Update { Replan = new ReplanPolicy { GoalThreshold = 0, MinUpdates = 1 } });
            Check(pol.Found && pol.Replanned && pol.ReplanReason == "goal_moved" && pol.Policy.GoalThreshold == 0 &&
                  pol.Policy.MinUpdates == 1 && pol.Policy.Hysteresis == 0.25,
                  "policy update: " + pol.ReplanReason + " hysteresis " + pol.Policy.Hysteresis);
            e = await Throws<PathdApiException>(() => c.UpdateSessionAsync("doors", r.SessionId,
                new Update { Replan = new ReplanPolicy { Hysteresis = 5 } }), "bad hysteresis");
            Check(e.Status == 422 && e.Field == "replan.hysteresis", "bad hysteresis field " + e.Field);
            await Throws<ArgumentException>(() => c.UpdateSessionAsync("doors", r.SessionId,
                new Update { Replan = new ReplanPolicy { Hysteresis = double.NaN } }), "NaN hysteresis");
            await c.DeleteSessionAsync("doors", r.SessionId);
            // Plan limits: a plan of at most 2 expansions stops (node_budget) and each read goes on
            // with it, to the unlimited session's cost; a deadline past max_deadline_ms is refused by name.
            var lim = await c.CreateSessionAsync("doors", new Point(0, 0), new Point(4, 0), null,
                                                 new SessionLimits { MaxExpanded = 2 });
            Check(!lim.Found && lim.Reason == "node_budget" && lim.Path.Count == 0 && lim.Expanded > 0 &&
                  lim.Expanded <= 2, "max_expanded 2: " + lim.Found + " " + lim.Reason + " " + lim.Expanded);
            var got = lim;
            int reads = 1;
            for (; !got.Found && reads < 100; reads++)
            {
                got = await c.GetSessionAsync("doors", lim.SessionId);
                Check(got.Found || (got.Reason == "node_budget" && got.Expanded <= 2), "read " + reads + ": " + got.Reason);
            }
            Check(got.Found && Math.Abs(got.Cost - s.Cost) < 1e-9, "limited reads: " + got.Cost + ", unlimited " + s.Cost);
            await c.DeleteSessionAsync("doors", lim.SessionId);
            e = await Throws<PathdApiException>(() => c.CreateSessionAsync("doors", new Point(0, 0), new Point(4, 0), null,
                new SessionLimits { DeadlineMs = 99999999 }), "deadline_ms past max_deadline_ms");
            Check(e.Status == 422 && e.Field == "deadline_ms", "deadline_ms field " + e.Field);
            await c.DeleteSessionAsync("doors", s.SessionId);
            e = await Throws<PathdApiException>(() => c.GetSessionAsync("doors", s.SessionId), "deleted");
            Check(e.Status == 404 && e.Code == ErrorCode.SessionNotFound, "session_not_found");
        }
    }

    static async Task Stream()
    {
        using (var c = Client())
        {
            await c.PutMapJsonAsync("doors", Doors);
            var s = await c.CreateSessionAsync("doors", new Point(0, 0), new Point(4, 0));
            var ws = await c.OpenStreamAsync("doors", s.SessionId);
            var a = await ws.SendAsync(new Update { Position = new Point(1, 1) });
            Check(a.Found && a.Position.X == 1 && a.Position.Y == 1 && a.SessionId == s.SessionId, "answer");
            var e = await Throws<PathdApiException>(() => ws.SendAsync(new Update { Position = new Point(-1, 0) }), "stream error");
            Check(e.Code == ErrorCode.OffMap, "off_map on the stream");
            var many = new List<CellChange>();
            for (int i = 0; i < 3000; i++) many.Add(new CellChange(4, 2, 1 + i % 5));
            Check((await ws.SendAsync(new Update { Cells = many })).Found, "the stream goes on; long messages");
            // The agent where it was: the short answer (no path), no search.
            var same = await ws.SendAsync(new Update { Position = new Point(1, 1) });
            Check(same.Unchanged && same.Path.Count == 0 && same.Found && !same.Replanned && same.Expanded == 0 &&
                  same.ReplanReason == "unchanged", "short stream answer: " + same.Unchanged + " " + same.ReplanReason);
            // A policy sent on the stream takes effect in its own answer.
            var ps = await ws.SendAsync(new Update { Replan = new ReplanPolicy { MinUpdates = 7 } });
            Check(ps.Policy.MinUpdates == 7 && ps.Policy.GoalThreshold == 0, "stream policy " + ps.Policy.MinUpdates);
            await ws.CloseAsync();
            e = await Throws<PathdApiException>(() => c.OpenStreamAsync("doors", "0123456789abcdef0123456789abcdef"), "unknown session");
            Check(e.Status == 404 && e.Code == ErrorCode.SessionNotFound, "refused handshake: " + e.Status + " " + e.CodeText);
        }
    }

    static async Task TransportErrors()
    {
        using (var c = Client("http://127.0.0.1:1", TimeSpan.FromSeconds(2)))
        {
            var e = await Throws<PathdTransportException>(() => c.GetMapAsync("room"), "no server");
            Check(e.Attempts == 1, "one attempt");
        }
    }

    static async Task RetryTimeoutShutdown()
    {
        using (var s2 = Server.Start("--max-sessions", "1", "--retry-after", "1"))
        using (var none = Client(s2.Url, null, 0))
        using (var patient = Client(s2.Url, null, 3))
        using (var hasty = Client(s2.Url, TimeSpan.FromMilliseconds(300), 0))
        {
            await none.PutMapJsonAsync("doors", Doors);
            var a = await none.CreateSessionAsync("doors", new Point(0, 0), new Point(4, 0));
            var e = await Throws<PathdApiException>(() => none.CreateSessionAsync("doors", new Point(0, 0), new Point(4, 0)), "no room");
            Check(e.Status == 503 && e.Code == ErrorCode.Overloaded && e.RetryAfter == TimeSpan.FromSeconds(1) && e.Attempts == 1,
                  "typed 503: " + e.Status + " " + e.CodeText + " " + e.RetryAfter + " " + e.Attempts);

            // The session is freed only once the server has refused the
            // patient client too (its second 503 in /metrics): freed on a
            // timer instead, a first attempt held back by a loaded machine
            // found room at once and never retried.
            var later = Task.Run(async () =>
            {
                for (var until = DateTime.UtcNow.AddSeconds(120); await Refused(none) < 2 && DateTime.UtcNow < until;)
                    await Task.Delay(10);
                await none.DeleteSessionAsync("doors", a.SessionId);
            });
            var t0 = DateTime.UtcNow;
            var b = await patient.CreateSessionAsync("doors", new Point(0, 0), new Point(4, 0));
            await later;
            Check(b.Found && (DateTime.UtcNow - t0).TotalMilliseconds >= 900, "retried after Retry-After");

            var sb = new StringBuilder("type octile\nheight 512\nwidth 512\nmap\n");
            for (int y = 0; y < 512; y++) sb.Append('.', 512).Append('\n');
            await none.PutMapAsync("open", sb.ToString());
            var qs = new List<PathQuery>();
            for (int i = 0; i < 64; i++)
                qs.Add(new PathQuery(new Point(0, i), new Point(511, 511 - i), new PathOptions { Algorithm = "dijkstra", Cache = false }));
            // A timeout, not the 200 or 504 the server answers later: the
            // client's own 300 ms ended the call.
            await Throws<PathdTimeoutException>(() => hasty.FindPathsAsync("open", qs, 3000), "slow batch");

            var ws = await none.OpenStreamAsync("doors", b.SessionId);
            Process.Start("kill", "-TERM " + s2.Proc.Id).WaitForExit();
            // The server takes the signal on its own thread: an update sent
            // before it has may still be answered (seen on a loaded machine),
            // so send until the stream is closed. The 120 s only stop a hang
            // (nothing runs this test under a timeout): not a speed check.
            PathdStreamClosedException closed = null;
            for (var until = DateTime.UtcNow.AddSeconds(120); closed == null && DateTime.UtcNow < until;)
            {
                try { await ws.SendAsync(new Update { Position = new Point(1, 0) }); await Task.Delay(10); }
                catch (PathdStreamClosedException x) { closed = x; }
            }
            Check(closed != null, "shutdown: the stream was never closed");
            // 1001 when the server's close frame was read first; 1006 when the
            // send met the reset of the socket the server had closed.
            Check(closed.CloseCode == 1001 || closed.CloseCode == 1006, "closed with " + closed.CloseCode);
            s2.Proc.WaitForExit();
            Check(s2.Proc.ExitCode == 0, "pathd exit " + s2.Proc.ExitCode);
        }
    }

    // The 503 answers pathd has counted (pathd_requests_total, every route).
    static async Task<long> Refused(PathdClient c)
    {
        var a = await c.RequestAsync("GET", "/metrics");
        long n = 0;
        foreach (var line in a.Body.Split('\n'))
            if (line.StartsWith("pathd_requests_total{") && line.Contains("status=\"503\""))
                n += long.Parse(line.Substring(line.LastIndexOf(' ') + 1));
        return n;
    }

    static async Task<long> VersionOf(string url, string id)
    {
        using (var c = Client(url, TimeSpan.FromSeconds(30), 0))
        {
            var a = await c.RequestAsync("GET", "/v1/maps/" + id);
            return a.Status == 200 ? (long)(double)Json.Obj(Json.Parse(a.Body), "map").Get("version") : 0;
        }
    }

    static void Unknown(PathdApiException e, int status, int attempts, string what)
    {
        Check(e.Code == ErrorCode.StoreOutcomeUnknown && e.Status == status && e.Attempts == attempts,
              what + ": " + e.CodeText + " " + e.Status + " attempts " + e.Attempts + ": " + e.Message);
    }

    /// <summary>pathd --store on a primary whose one replica is stopped, waiting for it
    /// (--store-wait-replicas 1): each change is made on the primary and answered 503
    /// store_outcome_unknown. The client retries only with If-Match of the version it
    /// last saw (412: made, never twice), a PUT of a new map with If-None-Match: *, a
    /// DELETE as done on 404, and not a PATCH it has no ETag for. Without redis-server:
    /// skipped (under CI a failure).</summary>
    static async Task OutcomeUnknown()
    {
        if (!Redis.Installed())
        {
            Check(Environment.GetEnvironmentVariable("CI") == null, "redis-server is not installed (make fleet-deps)");
            Console.WriteLine("# skip outcome_unknown: redis-server is not installed");
            return;
        }
        using (var primary = Redis.Start())
        using (var replica = Redis.Start(primary.Port))
        {
            var deadline = DateTime.UtcNow.AddSeconds(15);
            while (!primary.Ask("INFO replication").Contains("state=online"))
            {
                Check(DateTime.UtcNow < deadline, "the replica never came online");
                await Task.Delay(50);
            }
            using (var s2 = Server.Start("--store", "redis://127.0.0.1:" + primary.Port, "--store-wait-replicas", "1",
                                         "--store-wait-ms", "200", "--retry-after", "1"))
            // 30 s: a loaded machine must not turn the setup's answers into unknown outcomes.
            using (var c = new PathdClient(s2.Url, timeout: TimeSpan.FromSeconds(30), maxRetries: 2, maxRetryWait: TimeSpan.FromMilliseconds(200)))
            using (var stranger = new PathdClient(s2.Url, timeout: TimeSpan.FromSeconds(30), maxRetries: 2, maxRetryWait: TimeSpan.FromMilliseconds(200)))
            {
                MapInfo m;
                bool made;
                try { m = await c.PutMapAsync("w", Room); made = m.Created; }
                catch (PathdApiException ex) when (ex.Code == ErrorCode.StoreOutcomeUnknown)
                {
                    // The replica, running, did not confirm within --store-wait-ms
                    // on a loaded machine: the map was made (the retry's 412 said so).
                    m = await c.GetMapAsync("w");
                    made = true;
                }
                Check(made && m.Version == 1 && m.ETag != null && m.ETag.StartsWith("\"1-"), "put: etag " + m.ETag);
                replica.Signal("STOP");
                try
                {
                    var e = await Throws<PathdApiException>(() => c.PatchMapAsync("w", new[] { new CellChange(1, 1, 5) }, null), "patch");
                    Unknown(e, 412, 2, "patch");
                    Check(await VersionOf(s2.Url, "w") == 2, "the PATCH was made once");
                    e = await Throws<PathdApiException>(() => stranger.PatchMapAsync("w", new[] { new CellChange(2, 1, 5) }, null), "stranger's patch");
                    Unknown(e, 503, 1, "stranger's patch");
                    Check(await VersionOf(s2.Url, "w") == 3, "the stranger's PATCH");
                    var seen = await stranger.GetMapAsync("w");
                    e = await Throws<PathdApiException>(() => c.PatchMapAsync("w", new[] { new CellChange(3, 1, 5) }, null,
                                                                              new WriteOptions { IfMatch = seen.ETag }), "conditional patch");
                    Unknown(e, 412, 2, "conditional patch");
                    Check(await VersionOf(s2.Url, "w") == 4, "the conditional PATCH");
                    e = await Throws<PathdApiException>(() => stranger.PutMapAsync("n", Room), "new put");
                    Unknown(e, 412, 2, "new put");
                    Check(await VersionOf(s2.Url, "n") == 1, "the new map");
                    await c.DeleteMapAsync("n");
                    Check(await VersionOf(s2.Url, "n") == 0, "the map was not deleted");
                }
                finally { replica.Signal("CONT"); }
                // With the replica running, changes simply succeed.
                deadline = DateTime.UtcNow.AddSeconds(10);
                for (;;)
                {
                    try { await c.PatchMapAsync("w", new[] { new CellChange(1, 1, 3) }, null); break; }
                    catch (PathdApiException)
                    {
                        Check(DateTime.UtcNow < deadline, "the replica never confirmed again");
                        await c.GetMapAsync("w"); // the ETag the next try is based on
                    }
                }
                Check(s2.Stop() == 0, "pathd --store exit");
            }
        }
    }

    static Task Example(string exe)
    {
        var psi = new ProcessStartInfo("mono", exe + " " + srv.Url) { UseShellExecute = false, RedirectStandardOutput = true };
        using (var p = Process.Start(psi))
        {
            var output = p.StandardOutput.ReadToEnd();
            p.WaitForExit();
            Console.Write(output);
            Check(p.ExitCode == 0 && output.Contains("gate shut: found=False reason=unreachable") &&
                  output.Contains("hall-door closed: hall > 3 cost=50"), "the example exited " + p.ExitCode);
        }
        return Task.FromResult(0);
    }

    static int Main(string[] args)
    {
        srv = Server.Start();
        Console.WriteLine("clients/csharp against " + srv.Url);
        Run("maps", Maps);
        Run("paths", Paths);
        Run("batch", Batch);
        Run("sessions", Sessions);
        Run("stream", Stream);
        Run("transport_errors", TransportErrors);
        Run("retry_timeout_shutdown", RetryTimeoutShutdown);
        Run("outcome_unknown", OutcomeUnknown);
        Run("graph_paths", GraphPaths);
        Run("graph_queries", GraphQueries);
        Run("graph_patch_export_dimacs", GraphPatchExportDimacs);
        Run("graph_sessions", GraphSessions);
        Run("graph_doors", GraphDoors);
        if (args.Length > 0) Run("example", () => Example(args[0]));
        if (srv.Stop() != 0) { failed++; Console.WriteLine("not ok - server exit"); }
        Console.WriteLine(passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }
}
