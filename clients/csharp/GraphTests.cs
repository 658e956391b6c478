// GraphTests.cs -- clients/csharp's waypoint graph calls against the real
// pathd Tests.cs starts: uploads (JSON and DIMACS), paths between ids and
// points, batches, tables, nearest of goals, partial paths, tag filters,
// PATCH, the export, and graph sessions over HTTP, NDJSON and the stream.
// Every cost is checked against RefGraph.Dijkstra below, a plain Dijkstra
// over the test's own edge list that shares nothing with the client or the
// server.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using Pathd;

/// <summary>The test's own copy of a graph, and a plain O(n^2) Dijkstra over it.</summary>
sealed class RefGraph
{
    public sealed class E { public int A, B; public double Cost; public bool Given, OneWay, On = true; public string Tag; }

    public int N;
    public List<GraphNodeId> Ids = new List<GraphNodeId>();
    public List<double[]> Pos = new List<double[]>();
    public List<bool> NodeOn = new List<bool>();
    public List<string> NodeTag = new List<string>();
    public List<E> Edges = new List<E>();

    public static RefGraph Random(int seed, int n, int m)
    {
        var r = new Random(seed);
        var g = new RefGraph { N = n };
        for (int i = 0; i < n; i++)
        {
            g.Ids.Add(i % 2 == 1 ? new GraphNodeId("n" + i) : new GraphNodeId(i + 1000));
            g.Pos.Add(new[] { Math.Round(r.NextDouble() * 1000) / 10, Math.Round(r.NextDouble() * 1000) / 10 });
            g.NodeOn.Add(true);
            g.NodeTag.Add(r.NextDouble() < 0.1 ? "water" : null);
        }
        for (int k = 0; k < m; k++)
        {
            int a = r.Next(n), b = r.Next(n);
            if (b == a) b = (a + 1) % n;
            double len = Math.Sqrt(Math.Pow(g.Pos[a][0] - g.Pos[b][0], 2) + Math.Pow(g.Pos[a][1] - g.Pos[b][1], 2));
            bool given = r.NextDouble() < 0.7;
            g.Edges.Add(new E
            {
                A = a, B = b, Given = given,
                Cost = given ? Math.Round((len * (1 + r.NextDouble()) + r.NextDouble() * 5) * 100) / 100 : len,
                OneWay = r.NextDouble() < 0.2,
                Tag = r.NextDouble() < 0.1 ? "toll" : null,
            });
        }
        return g;
    }

    public GraphUpload Upload()
    {
        var u = new GraphUpload();
        for (int i = 0; i < N; i++)
            u.Nodes.Add(new GraphNode { Id = Ids[i], Position = Pos[i], Tags = NodeTag[i] == null ? null : new List<string> { NodeTag[i] } });
        for (int i = 0; i < Edges.Count; i++)
        {
            var e = Edges[i];
            u.Edges.Add(new GraphEdge
            {
                From = Ids[e.A], To = Ids[e.B], Id = "e" + i, OneWay = e.OneWay,
                Cost = e.Given ? (double?)e.Cost : null,
                Tags = e.Tag == null ? null : new List<string> { e.Tag },
            });
        }
        return u;
    }

    public int Index(GraphNodeId id) { return Ids.FindIndex(x => x.Equals(id)); }

    /// <summary>Costs from s (infinity where unreached), walking no edge and entering no node tagged with one of exclude.</summary>
    public double[] Dijkstra(int s, params string[] exclude)
    {
        var dist = Enumerable.Repeat(double.PositiveInfinity, N).ToArray();
        var done = new bool[N];
        if (!NodeOn[s]) return dist;
        dist[s] = 0;
        for (;;)
        {
            int u = -1;
            for (int i = 0; i < N; i++)
                if (!done[i] && !double.IsInfinity(dist[i]) && (u < 0 || dist[i] < dist[u])) u = i;
            if (u < 0) return dist;
            done[u] = true;
            foreach (var e in Edges)
            {
                if (!e.On || (e.Tag != null && exclude.Contains(e.Tag))) continue;
                int v = e.A == u ? e.B : (!e.OneWay && e.B == u ? e.A : -1);
                if (v < 0 || !NodeOn[v] || (NodeTag[v] != null && exclude.Contains(NodeTag[v]))) continue;
                if (dist[u] + e.Cost < dist[v]) dist[v] = dist[u] + e.Cost;
            }
        }
    }
}

static partial class Tests
{
    static bool Near(double a, double b) { return Math.Abs(a - b) <= 1e-3 * Math.Max(1, Math.Abs(b)); }

    /// <summary>The path is a walk over g's edges from s to t whose costs add up to the answer's cost.</summary>
    static void CheckWalk(RefGraph g, List<GraphNodeId> path, List<int> edges, double cost, int s, int t, string what)
    {
        Check(g.Index(path[0]) == s && g.Index(path[path.Count - 1]) == t, what + ": the path's ends");
        Check(edges.Count == path.Count - 1, what + ": one edge between two nodes");
        double sum = 0;
        for (int k = 0; k < edges.Count; k++)
        {
            var e = g.Edges[edges[k]];
            int u = g.Index(path[k]), v = g.Index(path[k + 1]);
            Check((e.A == u && e.B == v) || (!e.OneWay && e.A == v && e.B == u), what + ": edge " + edges[k] + " joins its nodes");
            sum += e.Cost;
        }
        Check(Near(sum, cost), what + ": the edges add up to " + sum + ", answered " + cost);
    }

    static async Task GraphPaths()
    {
        using (var c = Client(timeout: TimeSpan.FromSeconds(10)))
        {
            var algorithms = new[] { "dijkstra", "astar", "alt", "auto" };
            for (int round = 0; round < 3; round++)
            {
                var g = RefGraph.Random(11 + round, 60, 150);
                var info = await c.PutGraphAsync("cg", g.Upload());
                Check(info.Kind == "graph" && info.Graph != null && info.Graph.Nodes == 60 && info.Graph.Edges == 150, "graph info");
                var r = new Random(round);
                var queries = new List<GraphQuery>();
                var want = new List<double>();
                for (int q = 0; q < 40; q++)
                {
                    int s = r.Next(g.N), t = r.Next(g.N);
                    double d = g.Dijkstra(s)[t];
                    var a = await c.FindGraphPathAsync("cg", g.Ids[s], g.Ids[t], new GraphPathOptions { Algorithm = algorithms[q % 4], Cache = false });
                    Check(a.Found == !double.IsInfinity(d), s + " -> " + t + " found");
                    if (a.Found)
                    {
                        Check(Near(a.Cost, d), s + " -> " + t + " (" + a.Algorithm + "): " + a.Cost + ", reference " + d);
                        CheckWalk(g, a.Path, a.Edges, a.Cost, s, t, s + " -> " + t);
                    }
                    else Check(a.Reason == "unreachable", "reason");
                    queries.Add(new GraphQuery { Start = g.Ids[s], Goal = g.Ids[t] });
                    want.Add(d);
                }
                var b = await c.FindGraphPathsAsync("cg", queries);
                for (int i = 0; i < queries.Count; i++)
                {
                    Check(!b.Results[i].IsError && b.Results[i].Path.Found == !double.IsInfinity(want[i]), "batch slot " + i);
                    if (b.Results[i].Path.Found) Check(Near(b.Results[i].Path.Cost, want[i]), "batch cost " + i);
                }
            }
            // Points snap to the nearest node, and the answer says which.
            var h = RefGraph.Random(5, 40, 100);
            await c.PutGraphAsync("cg", h.Upload());
            for (int q = 0; q < 15; q++)
            {
                var p = new[] { q * 5 + 0.25, 100 - q * 4.5 };
                Func<int, double> dist = i => Math.Sqrt(Math.Pow(h.Pos[i][0] - p[0], 2) + Math.Pow(h.Pos[i][1] - p[1], 2));
                int best = 0;
                for (int i = 1; i < h.N; i++) if (dist(i) < dist(best)) best = i;
                var a = await c.FindGraphPathAsync("cg", GraphPlace.At(p), h.Ids[0]);
                Check(a.Start.Snapped && a.Start.Node.Value.Equals(h.Ids[best]) && Near(a.Start.Distance.Value, dist(best)), "snapped to the nearest node");
                double d = h.Dijkstra(best)[0];
                Check(a.Found == !double.IsInfinity(d) && (!a.Found || Near(a.Cost, d)), "from a point");
            }
            var e = await c.FindGraphPathAsync("cg", GraphPlace.At(h.Pos[h.Edges[0].A]), h.Ids[1], new GraphPathOptions { SnapToEdge = true });
            Check(e.Start.Snapped && e.Start.Edge.HasValue && e.Start.At >= 0 && e.Start.At <= 1 && e.Start.Point.Length == 2, "snap to an edge names it");
            var bad = await c.FindGraphPathsAsync("cg", new[] { new GraphQuery { Start = h.Ids[0], Goal = "nope" }, new GraphQuery { Start = h.Ids[0], Goal = h.Ids[0] } });
            Check(bad.Results[0].IsError && bad.Results[0].Error.Field == "queries[0].goal" && bad.Results[1].Path.Found, "a bad query is its own slot");
            var ex = await Throws<PathdApiException>(() => c.FindGraphPathAsync("cg", "nope", h.Ids[0]), "an unknown start");
            Check(ex.Status == 422 && ex.Field == "start", "422 naming start");
        }
    }

    static async Task GraphQueries()
    {
        using (var c = Client(timeout: TimeSpan.FromSeconds(10)))
        {
            var g = RefGraph.Random(21, 50, 110);
            await c.PutGraphAsync("ct", g.Upload());
            var src = new[] { 0, 3, 7, 12 };
            var dst = new[] { 1, 4, 9, 20, 33 };
            var tab = await c.GraphTableAsync("ct", src.Select(i => (GraphPlace)g.Ids[i]).ToList(), dst.Select(i => (GraphPlace)g.Ids[i]).ToList(), paths: true);
            for (int i = 0; i < src.Length; i++)
            {
                var d = g.Dijkstra(src[i]);
                for (int j = 0; j < dst.Length; j++)
                {
                    var got = tab.Costs[i][j];
                    Check(double.IsInfinity(d[dst[j]]) ? got == null : got.HasValue && Near(got.Value, d[dst[j]]), "table " + src[i] + " -> " + dst[j]);
                    Check((tab.Paths[i][j] == null) == double.IsInfinity(d[dst[j]]), "table path " + i + "," + j);
                }
            }
            for (int s = 0; s < 10; s++)
            {
                var goals = new[] { s + 11, s + 22, s + 33 };
                var d = g.Dijkstra(s);
                double best = goals.Min(t => d[t]);
                var a = await c.FindNearestGoalAsync("ct", g.Ids[s], goals.Select(t => (GraphPlace)g.Ids[t]).ToList());
                Check(a.Found == !double.IsInfinity(best), "nearest goal found");
                if (a.Found) Check(Near(a.Cost, best) && Near(d[goals[a.GoalIndex.Value]], best), "nearest goal " + s);
                var x = g.Dijkstra(s, "toll", "water");
                foreach (int t in new[] { s + 1, s + 17 })
                {
                    var f = await c.FindGraphPathAsync("ct", g.Ids[s], g.Ids[t], new GraphPathOptions { ExcludeTags = new List<string> { "toll", "water" } });
                    Check(f.Found == !double.IsInfinity(x[t]) && (!f.Found || Near(f.Cost, x[t])), "exclude_tags " + s + " -> " + t);
                }
            }
            var iso = new GraphUpload();
            iso.Nodes.Add(new GraphNode { Id = "a", Position = new double[] { 0, 0 } });
            iso.Nodes.Add(new GraphNode { Id = "b", Position = new double[] { 10, 0 } });
            iso.Nodes.Add(new GraphNode { Id = "c", Position = new double[] { 20, 0 } });
            iso.Nodes.Add(new GraphNode { Id = "far", Position = new double[] { 25, 0 } });
            iso.Edges.Add(new GraphEdge { From = "a", To = "b" });
            iso.Edges.Add(new GraphEdge { From = "b", To = "c", Cost = 4 });
            await c.PutGraphAsync("ciso", iso);
            var p = await c.FindGraphPathAsync("ciso", "a", "far", new GraphPathOptions { Partial = true });
            Check(!p.Found && p.Partial && string.Join(",", p.Path) == "a,b,c", "partial: the way to the node nearest the goal");
            var budget = await c.FindGraphPathAsync("ciso", "a", "c", new GraphPathOptions { MaxExpanded = 1, Algorithm = "dijkstra", Cache = false });
            Check(!budget.Found && budget.Reason == "budget", "max_expanded");
        }
    }

    static async Task GraphPatchExportDimacs()
    {
        using (var c = Client(timeout: TimeSpan.FromSeconds(10)))
        {
            var g = RefGraph.Random(31, 40, 100);
            await c.PutGraphAsync("cp", g.Upload());
            var r = new Random(99);
            for (int round = 0; round < 5; round++)
            {
                var patch = new GraphPatch();
                int n = r.Next(g.N);
                g.NodeOn[n] = !g.NodeOn[n];
                patch.Node(g.Ids[n], g.NodeOn[n]);
                for (int k = 0; k < 4; k++)
                {
                    int i = r.Next(g.Edges.Count);
                    if (r.NextDouble() < 0.5)
                    {
                        g.Edges[i].On = !g.Edges[i].On;
                        patch.Edge(k % 2 == 1 ? new GraphEdgeChange { Index = i, Enabled = g.Edges[i].On } : new GraphEdgeChange { Id = "e" + i, Enabled = g.Edges[i].On });
                    }
                    else
                    {
                        g.Edges[i].Cost = r.Next(5000) / 100.0;
                        patch.Edge(new GraphEdgeChange { Index = i, Cost = g.Edges[i].Cost });
                    }
                }
                var info = await c.PatchGraphAsync("cp", patch);
                Check(info.Version == round + 2, "PATCH makes the next version");
                var ex = await c.GetGraphAsync("cp");
                Check(ex.Version == round + 2 && ex.Nodes.Count == g.N && ex.ETag != null, "the export's version");
                for (int i = 0; i < g.Edges.Count; i++)
                    Check(Near(ex.Edges[i].Cost.Value, g.Edges[i].Cost) && (ex.Edges[i].Enabled != false) == g.Edges[i].On, "exported edge " + i);
                for (int i = 0; i < g.N; i++) Check((ex.Nodes[i].Enabled != false) == g.NodeOn[i], "exported node " + i);
                for (int q = 0; q < 15; q++)
                {
                    int s = r.Next(g.N), t = r.Next(g.N);
                    if (!g.NodeOn[s] || !g.NodeOn[t]) continue;
                    double d = g.Dijkstra(s)[t];
                    var a = await c.FindGraphPathAsync("cp", g.Ids[s], g.Ids[t]);
                    Check(a.Found == !double.IsInfinity(d) && (!a.Found || Near(a.Cost, d)), "after PATCH " + round + ": " + s + " -> " + t);
                }
            }
            var back = (await c.GetGraphAsync("cp")).ToUpload();
            await c.PutGraphAsync("cp2", back);
            var a1 = await c.FindGraphPathAsync("cp", g.Ids[2], g.Ids[30]);
            var a2 = await c.FindGraphPathAsync("cp2", g.Ids[2], g.Ids[30]);
            Check(a1.Found == a2.Found && (!a1.Found || Near(a1.Cost, a2.Cost)), "the export uploads back to the same answers");
            var pe = await Throws<PathdApiException>(() => c.PatchGraphAsync("cp", new GraphPatch().Edge(new GraphEdgeChange { Index = 100000, Enabled = false })), "an edge past the graph");
            Check(pe.Status == 422 && pe.Field.StartsWith("edges[0]"), "422 naming edges[0]: " + pe.Field);

            // DIMACS: a 4 x 4 grid of one-way arcs both ways; ids 1..16.
            var dg = new RefGraph { N = 16 };
            var co = "c a test graph\np aux sp co 16\n";
            for (int i = 0; i < 16; i++)
            {
                dg.Ids.Add(i + 1);
                dg.Pos.Add(new double[] { (i % 4) * 10, (i / 4) * 10 });
                dg.NodeOn.Add(true);
                dg.NodeTag.Add(null);
                co += "v " + (i + 1) + " " + (i % 4) * 10 + " " + (i / 4) * 10 + "\n";
            }
            var arcs = new List<string>();
            for (int i = 0; i < 16; i++)
                foreach (int j in new[] { i + 1, i + 4 })
                {
                    if (j >= 16 || (j == i + 1 && i % 4 == 3)) continue;
                    int w1 = 10 + (i * 7 + j) % 9, w2 = 10 + (i + j * 5) % 11;
                    arcs.Add("a " + (i + 1) + " " + (j + 1) + " " + w1);
                    arcs.Add("a " + (j + 1) + " " + (i + 1) + " " + w2);
                    dg.Edges.Add(new RefGraph.E { A = i, B = j, Cost = w1, OneWay = true });
                    dg.Edges.Add(new RefGraph.E { A = j, B = i, Cost = w2, OneWay = true });
                }
            var gr = "c arcs\np sp 16 " + arcs.Count + "\n" + string.Join("\n", arcs) + "\n";
            var di = await c.PutGraphAsync("cdimacs", GraphUpload.Dimacs(gr, co));
            Check(di.Graph.Nodes == 16 && di.Graph.Arcs == arcs.Count, "DIMACS nodes and arcs");
            foreach (var st in new[] { new[] { 0, 15 }, new[] { 15, 0 }, new[] { 3, 12 }, new[] { 5, 6 } })
            {
                var a = await c.FindGraphPathAsync("cdimacs", st[0] + 1, st[1] + 1, new GraphPathOptions { Algorithm = "dijkstra" });
                Check(Near(a.Cost, dg.Dijkstra(st[0])[st[1]]), "DIMACS " + (st[0] + 1) + " -> " + (st[1] + 1));
                CheckWalk(dg, a.Path, a.Edges, a.Cost, st[0], st[1], "DIMACS walk");
            }
            var de = await Throws<PathdApiException>(() => c.PutGraphAsync("cbad", GraphUpload.Dimacs("p sp 2 1\na 1 3 5\n", "p aux sp co 2\nv 1 0 0\nv 2 1 1\n")), "a malformed .gr");
            Check(de.Status == 422 && de.Field == "dimacs.gr", "422 naming dimacs.gr: " + de.Field);
        }
    }

    static async Task GraphSessions()
    {
        using (var c = Client(timeout: TimeSpan.FromSeconds(10)))
        {
            var g = RefGraph.Random(41, 50, 140);
            await c.PutGraphAsync("cs", g.Upload());
            Action<GraphSessionAnswer, string> check = (a, what) =>
            {
                int s = g.Index(a.Position), t = g.Index(a.Goal);
                double d = g.Dijkstra(s)[t];
                Check(a.Found == !double.IsInfinity(d), what + ": found");
                if (a.Found)
                {
                    Check(Near(a.Cost, d), what + ": " + a.Cost + ", reference " + d);
                    CheckWalk(g, a.Path, a.Edges, a.Cost, s, t, what);
                }
            };
            var s0 = await c.CreateGraphSessionAsync("cs", g.Ids[0], g.Ids[25], ttlS: 60);
            Check(s0.Algorithm == "dstar_lite", "D* Lite");
            check(s0, "created");
            // Plan limits: one expansion a plan stops it (node_budget) while it has more to do, and
            // reading goes on to the unlimited session's answer.
            var lim = await c.CreateGraphSessionAsync("cs", g.Ids[0], g.Ids[25], null, new SessionLimits { MaxExpanded = 1 });
            Check(s0.Expanded <= 1 || (!lim.Found && lim.Reason == "node_budget"),
                  "max_expanded 1: " + lim.Found + " " + lim.Reason + " (unlimited: " + s0.Expanded + " expanded)");
            var got = lim;
            int reads = 1;
            for (; !got.Found && got.Reason == "node_budget" && reads < 1000; reads++)
            {
                Check(got.Expanded == 1, "read " + reads + ": " + got.Expanded + " expanded");
                got = await c.GetGraphSessionAsync("cs", lim.SessionId);
            }
            Check(got.Found == s0.Found && (!got.Found || Near(got.Cost, s0.Cost)),
                  "limited reads: " + got.Found + " " + got.Cost + " " + got.Reason + ", unlimited " + s0.Found + " " + s0.Cost);
            Check(s0.Expanded <= 1 || reads > 1, "read once only");
            await c.DeleteSessionAsync("cs", lim.SessionId);
            var sid = s0.SessionId;
            check(await c.UpdateGraphSessionAsync("cs", sid, new GraphUpdate { Position = g.Ids[3] }), "moved");
            check(await c.UpdateGraphSessionAsync("cs", sid, new[] { new GraphUpdate { Goal = g.Ids[30] }, new GraphUpdate { Position = g.Ids[4] } }), "NDJSON");
            var on = await c.GetGraphSessionAsync("cs", sid);
            if (on.Found && on.Edges.Count > 0)
            {
                g.Edges[on.Edges[0]].On = false;
                await c.PatchGraphAsync("cs", new GraphPatch().Edge(new GraphEdgeChange { Index = on.Edges[0], Enabled = false }));
                var after = await c.GetGraphSessionAsync("cs", sid);
                Check(after.Rebase == "incremental", "repaired incrementally");
                check(after, "after PATCH");
            }
            var ws = await c.OpenStreamAsync("cs", sid);
            var r = new Random(7);
            for (int k = 0; k < 12; k++)
            {
                var up = k % 3 != 0 ? new GraphUpdate { Position = g.Ids[r.Next(g.N)] } : new GraphUpdate { Goal = g.Ids[r.Next(g.N)] };
                var a = await ws.SendGraphAsync(up);
                if (!a.Unchanged) check(a, "stream " + k);
            }
            var se = await Throws<PathdApiException>(() => ws.SendGraphAsync(new GraphUpdate { Position = "nope" }), "an unknown node on the stream");
            Check(se.Field == "position", "the stream's error names position");
            await ws.CloseAsync();
            var p = await c.CreateGraphSessionAsync("cs", GraphPlace.At(g.Pos[5][0], g.Pos[5][1], 0), GraphPlace.At(g.Pos[6][0], g.Pos[6][1], 0));
            Check(p.Position.Equals(g.Ids[5]), "a point snaps to its node");
            await c.DeleteSessionAsync("cs", p.SessionId);
            await c.DeleteSessionAsync("cs", sid);
        }
    }

    /// <summary>Door groups (graphops28's server): skipped, and said so, when /v1/info names no graph_max_doors.</summary>
    static async Task GraphDoors()
    {
        using (var c = Client(timeout: TimeSpan.FromSeconds(10)))
        {
            var info = await c.RequestAsync("GET", "/v1/info");
            if (!info.Body.Contains("\"graph_max_doors\""))
            {
                Console.WriteLine("# graph_doors skipped: this pathd has no door groups (graphops28 adds them)");
                return;
            }
            var g = RefGraph.Random(51, 40, 100);
            var up = g.Upload();
            var d0 = new GraphDoor { Name = "d0" };
            for (int i = 0; i < 10; i++) d0.EdgeIndices.Add(i);
            var d1 = new GraphDoor { Name = "d1", Open = false };
            for (int i = 10; i < 20; i++) d1.EdgeIds.Add("e" + i);
            d1.Nodes.Add(g.Ids[5]);
            up.Doors.Add(d0);
            up.Doors.Add(d1);
            var m = await c.PutGraphAsync("cdoors", up);
            Check(m.Graph.Doors.Count == 2, "two doors");
            var states = new[] { new[] { true, false }, new[] { false, false }, new[] { false, true }, new[] { true, true } };
            for (int k = 0; k < states.Length; k++)
            {
                if (k > 0) m = await c.PatchGraphAsync("cdoors", new GraphPatch().Door("d0", states[k][0]).Door("d1", states[k][1]));
                for (int i = 0; i < 20; i++) g.Edges[i].On = i < 10 ? states[k][0] : states[k][1];
                g.NodeOn[5] = states[k][1];
                Check(m.Graph.Doors[0].Open == states[k][0] && m.Graph.Doors[1].Open == states[k][1], "door states " + k);
                for (int s = 0; s < g.N; s += 3)
                {
                    int t = (s * 7 + 11) % g.N;
                    if (!g.NodeOn[s] || !g.NodeOn[t]) continue;
                    double d = g.Dijkstra(s)[t];
                    var a = await c.FindGraphPathAsync("cdoors", g.Ids[s], g.Ids[t]);
                    Check(a.Found == !double.IsInfinity(d) && (!a.Found || Near(a.Cost, d)), "doors " + k + ": " + s + " -> " + t);
                }
            }
            var e = await Throws<PathdApiException>(() => c.PatchGraphAsync("cdoors", new GraphPatch().Door("nope", false)), "an unknown door");
            Check(e.Status == 422 && e.Field == "doors[0].name", "422 naming doors[0].name: " + e.Field);
        }
    }
}
