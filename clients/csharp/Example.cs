// Example.cs -- the C# client in one page: upload a map, ask for a path,
// then follow a moving agent with a D* Lite session over a WebSocket.
//
//   mcs -r:System.Net.Http.dll Pathd.cs Example.cs -out:example.exe
//   mono example.exe http://127.0.0.1:8080
using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using Pathd;

static class Example
{
    static async Task Run(string baseUrl)
    {
        // 503s are retried after Retry-After; each attempt has 5 s.
        using (var pathd = new PathdClient(baseUrl, timeout: TimeSpan.FromSeconds(5)))
        {
            var map = await pathd.PutMapJsonAsync("example",
                "{\"rows\":[\"..#..\",\"..#..\",\".....\"],\"doors\":{\"gate\":{\"cells\":[[2,2]]}}}");
            Console.WriteLine("map " + map.Id + " version " + map.Version + ": " + map.Width + "x" + map.Height +
                              ", " + map.Doors + " door(s)");

            var path = await pathd.FindPathAsync("example", new Point(0, 0), new Point(4, 0));
            Console.WriteLine("path found=" + path.Found + " cost=" + path.Cost.ToString("F3") + " steps=" +
                              path.Path.Count + " algorithm=" + path.Algorithm);
            try
            {
                await pathd.FindPathAsync("example", new Point(0, 0), new Point(40, 0));
            }
            catch (PathdApiException e)
            {
                Console.WriteLine("typed error: " + e.Status + " " + e.Code + " (field " + e.Field + ")");
            }

            // A session follows one agent; the stream sends its moves and the
            // doors it sees, and answers the repaired path each time.
            var s = await pathd.CreateSessionAsync("example", new Point(0, 0), new Point(4, 0), ttlS: 60);
            var stream = await pathd.OpenStreamAsync("example", s.SessionId);
            var moved = await stream.SendAsync(new Update { Position = new Point(1, 1) });
            Console.WriteLine("after the move: cost=" + moved.Cost.ToString("F3") + " from " + moved.Position);
            var shut = await stream.SendAsync(new Update { Doors = new List<DoorSwitch> { new DoorSwitch("gate", false) } });
            Console.WriteLine("gate shut: found=" + shut.Found + " reason=" + shut.Reason);
            await stream.CloseAsync();

            await pathd.DeleteSessionAsync("example", s.SessionId);
            await pathd.DeleteMapAsync("example");

            // A waypoint graph: ids as strings or integers, a point snapped to
            // the nearest node, a PATCH that closes an edge as the next version.
            var rooms = new GraphUpload();
            rooms.Nodes.Add(new GraphNode { Id = "hall", Position = new double[] { 0, 0 } });
            rooms.Nodes.Add(new GraphNode { Id = "door", Position = new double[] { 10, 0 } });
            rooms.Nodes.Add(new GraphNode { Id = 3, Position = new double[] { 10, 10 } });
            rooms.Edges.Add(new GraphEdge { From = "hall", To = "door", Id = "hall-door" });
            rooms.Edges.Add(new GraphEdge { From = "door", To = 3, Cost = 25 });
            rooms.Edges.Add(new GraphEdge { From = "hall", To = 3, Cost = 50 });
            await pathd.PutGraphAsync("rooms", rooms);
            var g = await pathd.FindGraphPathAsync("rooms", GraphPlace.At(1, 1), 3);
            Console.WriteLine("graph path " + string.Join(" > ", g.Path) + " cost=" + g.Cost + " (start snapped to " + g.Start.Node + ")");
            await pathd.PatchGraphAsync("rooms", new GraphPatch().Edge(new GraphEdgeChange { Id = "hall-door", Enabled = false }));
            var around = await pathd.FindGraphPathAsync("rooms", "hall", 3);
            Console.WriteLine("hall-door closed: " + string.Join(" > ", around.Path) + " cost=" + around.Cost);
            await pathd.DeleteMapAsync("rooms");
        }
    }

    static int Main(string[] args)
    {
        try
        {
            Run(args.Length > 0 ? args[0] : "http://127.0.0.1:8080").GetAwaiter().GetResult();
            return 0;
        }
        catch (PathdException e)
        {
            Console.Error.WriteLine(e.GetType().Name + ": " + e.Message);
            return 1;
        }
    }
}
