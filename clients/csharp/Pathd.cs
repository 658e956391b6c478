// Pathd.cs -- a C# client for the pathd v1 HTTP API, in one file.
//
// Written against the .NET Standard 2.0 API (HttpClient, ClientWebSocket,
// Task), C# 7.2, and no package: it drops into Unity (dedicated servers;
// WebGL has no ClientWebSocket) and .NET servers as source or as a built
// Pathd.dll. The JSON reader and writer are in this file (Pathd.Json), since
// .NET Standard 2.0 has none and Unity's JsonUtility reads no dictionaries.
//
// A thin wrapper: each method is one operation of proto/openapi.yaml (its
// operationId is in the comment) and returns plain classes whose fields are
// the API's, in PascalCase. Errors are typed exceptions:
//
//   PathdApiException           the server answered an error body: Status,
//                               Code (ErrorCode), CodeText, Field, RetryAfter
//   PathdTimeoutException       no answer within Timeout
//   PathdTransportException     could not connect, connection lost, ...
//   PathdProtocolException      an answer that is not what the API promises
//   PathdStreamClosedException  a session stream closed (1001: server stops)
//
// An unreachable goal is not an error: PathAnswer.Found is false, as in the
// API. Each attempt is bounded by Timeout; a 503 whose code says the
// server did nothing (queue full, session or stream limits, shutting down,
// the shared store out of reach) is retried up to MaxRetries times after
// its Retry-After (capped by MaxRetryWait); a read is also retried on any
// other 503. No other answer is retried. A PathdClient is thread-safe
// (HttpClient is); a SessionStream answers one Update at a time, in order.
//
// Changes whose outcome is unknown: a change (PutMap*, CreateMap, PatchMap,
// DeleteMap) answered 503 store_outcome_unknown (a fleet's Redis did not
// confirm it in time), 502 or 504 (a proxy lost the answer), a 503 that is
// not pathd's, or sent and never answered, may have been made. It is
// retried (up to MaxRetries) only where a retry cannot make it twice: with
// If-Match set to the ETag the change was based on (the caller's
// WriteOptions, else the last ETag this client saw for the map from its own
// uploads, GETs and PATCHes), else If-None-Match: * for a PUT, a DELETE as
// it was (404 then means done), a POST as it was (the same bytes find the
// same map). A 2xx then means made, once. A 412 on the retry, a PATCH with
// no ETag known, or retries used up throw PathdApiException with Code
// StoreOutcomeUnknown: read the map (when the last attempt got no answer at
// all, its PathdTimeoutException or PathdTransportException is thrown, which
// on a change says the same).
//
// Tokens: Token is sent as `Authorization: Bearer` (issue 13's read/write
// scopes; this server build does not check them yet).

using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.IO;
using System.Net;
using System.Net.Http;
using System.Net.Http.Headers;
using System.Net.Security;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Security.Cryptography;
using System.Text;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;

namespace Pathd
{
    // ---- errors ----

    /// <summary>The API's error codes (ErrorObject.code).</summary>
    public enum ErrorCode
    {
        Unknown, MalformedJson, InvalidRequest, MalformedMap, InvalidMapId, MapNotFound, NotFound,
        MethodNotAllowed, BodyTooLarge, LimitExceeded, UnsupportedMediaType, InvalidValue, OffMap,
        Blocked, Unsupported, Overloaded, ShuttingDown, DeadlineExceeded, OutOfMemory, Internal,
        SessionNotFound, SessionBusy, TooManySessions, UpgradeRequired, Conflict, StorageFailed,
        PreconditionFailed, StoreUnavailable, StoreOutcomeUnknown, StoreNotDurable, NotReady
    }

    public class PathdException : Exception
    {
        /// <summary>HTTP attempts made (retries + 1).</summary>
        public int Attempts { get; internal set; }
        public PathdException(string message, Exception inner = null) : base(message, inner) { }
    }

    public sealed class PathdApiException : PathdException
    {
        /// <summary>The HTTP status (the slot's for a batch error, 0 on a stream).</summary>
        public int Status { get; }
        public ErrorCode Code { get; }
        /// <summary>The code as sent ("off_map"), also for codes this client does not know.</summary>
        public string CodeText { get; }
        /// <summary>The request field at fault ("start", "queries[3].goal"), or null.</summary>
        public string Field { get; }
        public TimeSpan? RetryAfter { get; }

        public PathdApiException(int status, string code, string message, string field, TimeSpan? retryAfter)
            : base(message)
        {
            Status = status;
            CodeText = code;
            Code = ParseCode(code);
            Field = field;
            RetryAfter = retryAfter;
        }

        static ErrorCode ParseCode(string code)
        {
            var sb = new StringBuilder();
            foreach (var part in (code ?? "").Split('_'))
                if (part.Length > 0) sb.Append(char.ToUpperInvariant(part[0])).Append(part.Substring(1));
            ErrorCode c;
            return Enum.TryParse(sb.ToString(), false, out c) && c != ErrorCode.Unknown ? c : ErrorCode.Unknown;
        }
    }

    public sealed class PathdTimeoutException : PathdException
    {
        public PathdTimeoutException(string message, Exception inner = null) : base(message, inner) { }
    }

    public sealed class PathdTransportException : PathdException
    {
        public PathdTransportException(string message, Exception inner = null) : base(message, inner) { }
    }

    public sealed class PathdProtocolException : PathdException
    {
        public PathdProtocolException(string message, Exception inner = null) : base(message, inner) { }
    }

    public sealed class PathdStreamClosedException : PathdException
    {
        /// <summary>The close code (1001: the server shuts down), 1006 when the connection dropped.</summary>
        public int CloseCode { get; }
        public PathdStreamClosedException(int code, string message) : base(message) { CloseCode = code; }
    }

    // ---- the API's shapes ----

    public struct Point
    {
        public int X, Y;
        public Point(int x, int y) { X = x; Y = y; }
        public override string ToString() { return "[" + X + "," + Y + "]"; }
    }

    public sealed class MapInfo
    {
        public string Id;
        public long Version;
        public int Width, Height, Connectivity, Doors, JpsLandmarks;
        public bool CornerCutting, UniformCost, HasHierarchy;
        public long WalkableCells, MemoryBytes, BuildUs;
        public string DefaultAlgorithm;
        public string Kind;          // "grid", "navmesh" or "graph"
        public GraphInfo Graph;      // kind "graph": its nodes, edges, landmarks, ...; else null
        /// <summary>The upload answered 201 (a new map) rather than 200.</summary>
        public bool Created;
        /// <summary>The answer's ETag ("\"3-7\""), null without one.</summary>
        public string ETag;
    }

    /// <summary>A change's preconditions (RFC 9110): 412 precondition_failed when they do not hold, and nothing changed.</summary>
    public sealed class WriteOptions
    {
        /// <summary>An ETag as answered, or "*" (the map exists).</summary>
        public string IfMatch;
        /// <summary>If-None-Match: * (a PUT that only creates).</summary>
        public bool IfNoneMatchAny;
    }

    /// <summary>PathRequest without start and goal; null fields take the server's defaults.</summary>
    public sealed class PathOptions
    {
        public string Algorithm;     // "astar", "jps", "hpa", ...
        public double? Weight;       // "weighted" only
        public string Heuristic;
        public bool? Smooth, Debug, Cache;
        public int? DeadlineMs;      // single paths only; a batch has one deadline
        public long? MaxExpanded;
    }

    public sealed class PathAnswer
    {
        public bool Found;
        public double Cost;          // when found
        public string Reason;        // when not found: "unreachable" or "node_budget"
        public List<Point> Path = new List<Point>();
        public string Algorithm;
        public long MapVersion;
        public long Expanded, TimeUs;
        public bool Cached;
    }

    public struct PathQuery
    {
        public Point Start, Goal;
        public PathOptions Options;
        public PathQuery(Point start, Point goal, PathOptions options = null) { Start = start; Goal = goal; Options = options; }
    }

    /// <summary>One slot of a batch: Path, or Error for a query that failed alone.</summary>
    public sealed class BatchSlot
    {
        public PathAnswer Path;
        public PathdApiException Error;
        public bool IsError { get { return Error != null; } }
    }

    public sealed class BatchAnswer
    {
        public List<BatchSlot> Results = new List<BatchSlot>();
        public long MapVersion;
    }

    public struct CellChange
    {
        public int X, Y, Cost;       // cost 0 blocks
        public CellChange(int x, int y, int cost) { X = x; Y = y; Cost = cost; }
    }

    public struct DoorSwitch
    {
        public string Id;
        public bool Open;
        public DoorSwitch(string id, bool open) { Id = id; Open = open; }
    }

    /// <summary>A session's replanning policy (ReplanPolicy in the spec): when to plan again as
    /// the goal moves. A null member is not sent: the session keeps its value (at create, the
    /// server's default, GET /v1/info). The server refuses a value out of range naming the field
    /// ("replan.hysteresis").</summary>
    public sealed class ReplanPolicy
    {
        public long? MinIntervalMs;  // no replan sooner after the last one (ms), 0 none
        public long? MinUpdates;     // at most one replan every n requests (frames), 0 none
        public double? GoalThreshold; // a goal move replans once it is farther than this, 0 any
        public double? Hysteresis;   // keep the route unless a new one is cheaper by this fraction
    }

    /// <summary>A session's limits on each of its plans, the first and every repair (SessionRequest's
    /// max_expanded and deadline_ms), for grid and graph sessions. A plan that reaches one answers
    /// Found false with Reason "node_budget" or "deadline" and keeps its search: the next request
    /// (a get is enough) goes on with the same repair, so reading until found ends at the unlimited
    /// session's path and cost. A null member is not sent (no limit). The server refuses a value out
    /// of range naming the field (422 invalid_value; DeadlineMs past its max_deadline_ms too); a
    /// navmesh session refuses both.</summary>
    public sealed class SessionLimits
    {
        public long? MaxExpanded;    // expansions one plan may do; 0 = unlimited
        public long? DeadlineMs;     // ms one plan may run, from when its worker starts it
    }

    /// <summary>A session update; null members are left as they are.</summary>
    public sealed class Update
    {
        public Point? Position, Goal;
        public List<CellChange> Cells;
        public List<DoorSwitch> Doors;
        public ReplanPolicy Replan;  // null: the policy unchanged
    }

    public sealed class SessionAnswer
    {
        public string SessionId, MapId;
        public bool Found;
        public double Cost;
        public string Reason;        // when not found: "unreachable", "blocked", or "node_budget" /
                                     // "deadline" (the session's limits stopped the plan)
        public List<Point> Path = new List<Point>();
        public Point Position, Goal;
        public long MapVersion, TtlS;
        public long Expanded, TimeUs, Updates, MemoryBytes;
        public string Rebase;        // "none", "incremental", "rebuilt"
        // A stream's short answer: the route did not change since the last
        // whole answer on this stream; Path is empty (it is that answer's
        // from Position on). Never on HTTP.
        public bool Unchanged;
        public string ReplanReason;  // why it replanned or did not ("goal_moved", "threshold", ...)
        public bool Replanned;       // a search ran (false: the kept route, Expanded 0)
        public string ReplanRoute;   // what became of the route: "none", "new", "kept", ...
        public bool Flip;            // the new route turned the agent away from its kept one
        public ReplanPolicy Policy;  // the policy in force (every member set)
    }

    // ---- the client ----

    // ---- waypoint graphs (kind "graph"; docs/graphs.md) ----

    /// <summary>A graph node's id: a string of 1..64 bytes or an integer (17 and "17" are one id).
    /// Strings and integers convert to it implicitly.</summary>
    public struct GraphNodeId : IEquatable<GraphNodeId>
    {
        public readonly string Text;   // the string id, or null for an integer id
        public readonly long Number;   // the integer id when Text is null
        public GraphNodeId(string text) { Text = text ?? throw new ArgumentNullException(nameof(text)); Number = 0; }
        public GraphNodeId(long number) { Text = null; Number = number; }
        public bool IsNumber { get { return Text == null; } }
        public static implicit operator GraphNodeId(string s) { return new GraphNodeId(s); }
        public static implicit operator GraphNodeId(long n) { return new GraphNodeId(n); }
        /// <summary>The id's text: one namespace for both forms, as the server's.</summary>
        public override string ToString() { return Text ?? Number.ToString(CultureInfo.InvariantCulture); }
        public bool Equals(GraphNodeId o) { return ToString() == o.ToString(); }
        public override bool Equals(object o) { return o is GraphNodeId && Equals((GraphNodeId)o); }
        public override int GetHashCode() { return ToString().GetHashCode(); }
        internal void Write(Json.Writer w) { if (Text != null) w.String(Text); else w.Raw(Number.ToString(CultureInfo.InvariantCulture)); }
    }

    /// <summary>Where a graph query starts or ends: a node by id, or a point (2 or 3 coordinates)
    /// snapped to the nearest enabled node (or edge, with GraphPathOptions.SnapToEdge).</summary>
    public sealed class GraphPlace
    {
        public GraphNodeId? Node;
        public double[] Point;
        public static GraphPlace At(params double[] xyz)
        {
            if (xyz == null || xyz.Length < 2 || xyz.Length > 3) throw new ArgumentException("a point has 2 or 3 coordinates");
            return new GraphPlace { Point = xyz };
        }
        public static implicit operator GraphPlace(GraphNodeId id) { return new GraphPlace { Node = id }; }
        public static implicit operator GraphPlace(string id) { return new GraphPlace { Node = id }; }
        public static implicit operator GraphPlace(long id) { return new GraphPlace { Node = id }; }
    }

    public sealed class GraphNode
    {
        public GraphNodeId Id;
        public double[] Position;        // [x, y] or [x, y, z], the same for every node
        public List<string> Tags;
        public bool? Enabled;            // false: uploaded disabled
    }

    public sealed class GraphEdge
    {
        public GraphNodeId From, To;
        public double? Cost;             // null: the straight-line length times Factor (or the upload's CostFactor)
        public double? Factor;
        public bool OneWay;              // only From -> To
        public string Id;                // a PATCH may name the edge by it (else by its index)
        public List<string> Tags;
        public bool? Enabled;
    }

    /// <summary>GraphUpload: nodes and edges, or the 9th DIMACS challenge's .gr/.co text (Dimacs).</summary>
    public sealed class GraphUpload
    {
        public List<GraphNode> Nodes = new List<GraphNode>();
        public List<GraphEdge> Edges = new List<GraphEdge>();
        public double? CostFactor;
        public string DimacsGr, DimacsCo;
        /// <summary>Door groups, opened and closed by name with GraphPatch.Door (graphops28's server; main's refuses the field).</summary>
        public List<GraphDoor> Doors = new List<GraphDoor>();
        /// <summary>A DIMACS upload as the server takes it: the .gr arcs (one-way) and .co coordinates, as they are.</summary>
        public static GraphUpload Dimacs(string gr, string co) { return new GraphUpload { DimacsGr = gr, DimacsCo = co }; }
    }

    /// <summary>A door group: edges (by index or id) and nodes switched together by name.</summary>
    public sealed class GraphDoor
    {
        public string Name;
        public List<int> EdgeIndices = new List<int>();
        public List<string> EdgeIds = new List<string>();
        public List<GraphNodeId> Nodes = new List<GraphNodeId>();
        public bool Open = true;         // false: uploaded closed (its members disabled)
    }

    /// <summary>A door group's state in a version (GraphInfo.Doors).</summary>
    public sealed class GraphDoorInfo
    {
        public string Name;
        public bool Open;
        public long Edges, Nodes;
    }

    /// <summary>A graph map's graph (MapInfo.Graph).</summary>
    public sealed class GraphInfo
    {
        public long Nodes, Edges, Arcs, DisabledNodes, DisabledEdges, Components;
        public int Dimensions, MaxDegree, Landmarks;
        public double HeuristicRatio, LandmarkScale;
        public List<GraphDoorInfo> Doors = new List<GraphDoorInfo>();   // empty when none were declared
    }

    public sealed class GraphPathOptions
    {
        public string Algorithm;         // "auto", "astar", "alt", "dijkstra"
        public long? MaxExpanded;
        public bool? Partial;            // the path to the closed node nearest the goal when it is not reached
        public bool? Cache;
        public int? DeadlineMs;          // single paths only; a batch has one deadline
        public List<string> ExcludeTags; // edges and nodes carrying any of these are not walked
        public bool SnapToEdge;          // points go to the nearest point on an edge (snap "edge")
    }

    /// <summary>One query of a graph batch: Goal, or Goals (the cheapest of them).</summary>
    public sealed class GraphQuery
    {
        public GraphPlace Start, Goal;
        public List<GraphPlace> Goals;
        public GraphPathOptions Options;
    }

    /// <summary>Where a graph path starts or ends: the node, and for a point how it snapped.</summary>
    public sealed class GraphEnd
    {
        public GraphNodeId? Node;
        public bool Snapped;
        public double? Distance;
        public int? Edge;                // snap "edge": the edge, where on it (from its From node), the point
        public double? At;
        public double[] Point;
    }

    public sealed class GraphPathAnswer
    {
        public bool Found;
        public int? GoalIndex;           // with Goals: the goal reached
        public bool Partial;
        public double Cost;
        public string Reason;            // "unreachable" or "budget" when not found
        public List<GraphNodeId> Path = new List<GraphNodeId>();
        public List<int> Edges = new List<int>();   // Edges[i] joins Path[i] and Path[i + 1]
        public List<double[]> Points = new List<double[]>();
        public GraphEnd Start, Goal;
        public string Algorithm;
        public long MapVersion, Expanded, TimeUs;
        public bool Cached;
    }

    public sealed class GraphBatchSlot
    {
        public GraphPathAnswer Path;
        public PathdApiException Error;
        public bool IsError { get { return Error != null; } }
    }

    public sealed class GraphBatchAnswer
    {
        public List<GraphBatchSlot> Results = new List<GraphBatchSlot>();
        public long MapVersion;
    }

    public sealed class GraphTable
    {
        public List<List<double?>> Costs = new List<List<double?>>();        // Costs[i][j]: null without a path
        public List<List<List<GraphNodeId>>> Paths;                          // with paths: null without one
        public List<GraphEnd> Sources = new List<GraphEnd>(), Targets = new List<GraphEnd>();
        public string Algorithm;
        public long MapVersion, Searches, Expanded, Unreachable, TimeUs;
    }

    /// <summary>An edge's change in a GraphPatch: by Index, or by Id.</summary>
    public sealed class GraphEdgeChange
    {
        public int? Index;
        public string Id;
        public bool? Enabled;
        public double? Cost;
    }

    public sealed class GraphPatch
    {
        public List<DoorSwitch> Doors = new List<DoorSwitch>();   // by name, applied before nodes and edges
        public List<KeyValuePair<GraphNodeId, bool>> Nodes = new List<KeyValuePair<GraphNodeId, bool>>();
        public GraphPatch Door(string name, bool open) { Doors.Add(new DoorSwitch(name, open)); return this; }
        public List<GraphEdgeChange> Edges = new List<GraphEdgeChange>();
        public GraphPatch Node(GraphNodeId id, bool enabled) { Nodes.Add(new KeyValuePair<GraphNodeId, bool>(id, enabled)); return this; }
        public GraphPatch Edge(GraphEdgeChange e) { Edges.Add(e); return this; }
    }

    /// <summary>GET /v1/maps/{id}/graph: node i and edge i at index i, each edge's cost as this version has it.</summary>
    public sealed class GraphExport
    {
        public string Map, ETag;
        public long Version;
        public int Dimensions;
        public List<GraphNode> Nodes = new List<GraphNode>();
        public List<GraphEdge> Edges = new List<GraphEdge>();
        /// <summary>The export as an upload that builds the graph again.</summary>
        public GraphUpload ToUpload() { return new GraphUpload { Nodes = Nodes, Edges = Edges }; }
    }

    /// <summary>A graph session's update: the agent's node and the goal (ids, or points snapped to nodes).</summary>
    public sealed class GraphUpdate
    {
        public GraphPlace Position, Goal;
        public ReplanPolicy Replan;
    }

    public sealed class GraphSessionAnswer
    {
        public string SessionId, MapId;
        public bool Found;
        public double Cost;
        public string Reason;            // "unreachable", "node_budget", "deadline", "blocked" when not found
        public List<GraphNodeId> Path = new List<GraphNodeId>();   // empty in a stream's short answer (Unchanged)
        public List<int> Edges = new List<int>();
        public List<double[]> Points = new List<double[]>();
        public GraphNodeId Position, Goal;
        public long MapVersion, TtlS, Expanded, TimeUs, Updates, MemoryBytes;
        public string Algorithm;         // "dstar_lite"
        public string Rebase;            // "none", "incremental"
        public bool Unchanged, Replanned, Flip;
        public string ReplanReason, ReplanRoute;
        public ReplanPolicy Policy;
    }

    public sealed class PathdClient : IDisposable
    {
        static readonly Regex MapIdRe = new Regex("^[A-Za-z0-9_.-]{1,64}$");
        static readonly Regex SessionIdRe = new Regex("^[A-Za-z0-9_-]{1,64}$");
        /// <summary>503 codes of a change that say nothing was done: retried as it was.</summary>
        static readonly HashSet<string> NothingDone = new HashSet<string>
            { "overloaded", "shutting_down", "out_of_memory", "not_ready", "store_unavailable" };
        /// <summary>Maps whose last ETag a client remembers.</summary>
        const int ETagsKept = 1024;

        readonly HttpClient http;
        readonly string baseUrl;
        readonly Dictionary<string, string> etags = new Dictionary<string, string>();
        readonly Queue<string> etagOrder = new Queue<string>();

        public string Token { get; }
        public TimeSpan Timeout { get; }
        public int MaxRetries { get; }
        public TimeSpan MaxRetryWait { get; }

        /// <param name="baseUrl">"http://127.0.0.1:8080" (a path prefix is kept)</param>
        /// <param name="timeout">per attempt (default 10 s)</param>
        /// <param name="maxRetries">retries of a 503 (default 2; 0 = none)</param>
        /// <param name="maxRetryWait">cap on one Retry-After wait (default 10 s)</param>
        public PathdClient(string baseUrl, string token = null, TimeSpan? timeout = null, int maxRetries = 2,
                           TimeSpan? maxRetryWait = null)
        {
            if (string.IsNullOrEmpty(baseUrl)) throw new ArgumentException("baseUrl is required");
            this.baseUrl = baseUrl.TrimEnd('/');
            Token = token;
            Timeout = timeout ?? TimeSpan.FromSeconds(10);
            MaxRetries = Math.Max(0, maxRetries);
            MaxRetryWait = maxRetryWait ?? TimeSpan.FromSeconds(10);
            http = new HttpClient();
            http.Timeout = System.Threading.Timeout.InfiniteTimeSpan; // each attempt has its own
        }

        public void Dispose() { http.Dispose(); }

        /// <summary>The answer of <see cref="RequestAsync"/>, whatever its status.</summary>
        public sealed class Answer
        {
            public int Status;
            public string Body;
            public string ContentType;
            public TimeSpan? RetryAfter;
            public int Attempts;
            /// <summary>The ETag header, null without one.</summary>
            public string ETag;
        }

        /// <summary>One request to a path ("/v1/info"), retried on 503; any status is returned.</summary>
        public Task<Answer> RequestAsync(string method, string path, string body = null,
                                         string contentType = null, CancellationToken ct = default(CancellationToken))
        {
            return Send(method, path, body, contentType, null, false, ct);
        }

        /// <summary>The API error code of an answer body, null when it is not one.</summary>
        static string CodeOf(string body)
        {
            try
            {
                var e = Json.Obj(Json.Obj(Json.Parse(body), null).Get("error"), null);
                return e == null ? null : e.Get("code") as string;
            }
            catch (Exception) { return null; }
        }

        /// <summary>RequestAsync with extra headers; a change's 503 is retried only when its code says nothing was done.</summary>
        async Task<Answer> Send(string method, string path, string body, string contentType,
                                IDictionary<string, string> extra, bool change, CancellationToken ct)
        {
            for (int attempt = 0; ; attempt++)
            {
                var req = new HttpRequestMessage(new HttpMethod(method), baseUrl + path);
                req.Headers.Accept.Add(new MediaTypeWithQualityHeaderValue("application/json"));
                if (!string.IsNullOrEmpty(Token)) req.Headers.Authorization = new AuthenticationHeaderValue("Bearer", Token);
                if (extra != null)
                    foreach (var h in extra) req.Headers.TryAddWithoutValidation(h.Key, h.Value);
                if (body != null)
                {
                    req.Content = new ByteArrayContent(Encoding.UTF8.GetBytes(body));
                    req.Content.Headers.ContentType = MediaTypeHeaderValue.Parse(contentType ?? "application/json");
                }
                var answer = new Answer { Attempts = attempt + 1 };
                using (var cts = CancellationTokenSource.CreateLinkedTokenSource(ct))
                {
                    cts.CancelAfter(Timeout);
                    try
                    {
                        using (var res = await http.SendAsync(req, HttpCompletionOption.ResponseContentRead, cts.Token).ConfigureAwait(false))
                        {
                            answer.Status = (int)res.StatusCode;
                            answer.Body = res.Content == null ? "" : await res.Content.ReadAsStringAsync().ConfigureAwait(false);
                            answer.ContentType = res.Content != null && res.Content.Headers.ContentType != null
                                ? res.Content.Headers.ContentType.MediaType : null;
                            if (res.Headers.RetryAfter != null && res.Headers.RetryAfter.Delta.HasValue)
                                answer.RetryAfter = res.Headers.RetryAfter.Delta.Value;
                            IEnumerable<string> tags;
                            if (res.Headers.TryGetValues("ETag", out tags))
                                foreach (var t in tags) answer.ETag = t;
                        }
                    }
                    catch (OperationCanceledException e)
                    {
                        if (ct.IsCancellationRequested) throw;
                        throw new PathdTimeoutException(method + " " + path + ": no answer within " + Timeout.TotalMilliseconds + " ms", e) { Attempts = attempt + 1 };
                    }
                    catch (HttpRequestException e)
                    {
                        throw new PathdTransportException(method + " " + path + ": " + Innermost(e).Message, e) { Attempts = attempt + 1 };
                    }
                    catch (IOException e)
                    {
                        throw new PathdTransportException(method + " " + path + ": " + e.Message, e) { Attempts = attempt + 1 };
                    }
                    catch (WebException e)
                    {
                        throw new PathdTransportException(method + " " + path + ": " + e.Message, e) { Attempts = attempt + 1 };
                    }
                    finally
                    {
                        req.Dispose();
                    }
                }
                if (answer.Status == 503 && attempt < MaxRetries && (!change || NothingDone.Contains(CodeOf(answer.Body) ?? "")))
                {
                    var wait = answer.RetryAfter ?? TimeSpan.FromSeconds(1);
                    await Task.Delay(wait < MaxRetryWait ? wait : MaxRetryWait, ct).ConfigureAwait(false);
                    continue;
                }
                return answer;
            }
        }

        static Exception Innermost(Exception e)
        {
            while (e.InnerException != null) e = e.InnerException;
            return e;
        }

        internal static PathdException ApiError(int status, string body, TimeSpan? retryAfter)
        {
            object v;
            try { v = Json.Parse(body); }
            catch (FormatException) { return new PathdProtocolException("HTTP " + status + " with a body that is not JSON"); }
            var e = Json.Obj(Json.Obj(v, null).Get("error"), null);
            if (e == null || !(e.Get("code") is string))
                return new PathdProtocolException("HTTP " + status + " without an API error body");
            return new PathdApiException(status, (string)e.Get("code"), e.Get("message") as string,
                                         e.Get("field") as string, retryAfter);
        }

        /// <summary>A call whose success is one of ok; the JSON body parsed (null for 204).</summary>
        async Task<Json.Object> Call(string method, string path, int[] ok, string body, string contentType,
                                     CancellationToken ct, Action<int> status = null)
        {
            var a = await RequestAsync(method, path, body, contentType, ct).ConfigureAwait(false);
            if (Array.IndexOf(ok, a.Status) < 0)
            {
                var e = ApiError(a.Status, a.Body, a.RetryAfter);
                e.Attempts = a.Attempts;
                throw e;
            }
            if (status != null) status(a.Status);
            if (a.Status == 204 || string.IsNullOrEmpty(a.Body)) return null;
            try { return Json.Obj(Json.Parse(a.Body), "the answer"); }
            catch (FormatException e) { throw new PathdProtocolException(method + " " + path + ": " + e.Message, e) { Attempts = a.Attempts }; }
        }

        void Remember(string id, string etag)
        {
            lock (etags)
            {
                if (etag == null) { etags.Remove(id); return; }
                if (!etags.ContainsKey(id)) etagOrder.Enqueue(id);
                etags[id] = etag;
                while (etagOrder.Count > ETagsKept) etags.Remove(etagOrder.Dequeue());
            }
        }

        string Remembered(string id)
        {
            lock (etags) { string t; return etags.TryGetValue(id, out t) ? t : null; }
        }

        static PathdApiException OutcomeUnknown(int status, string message, int attempts)
        {
            return new PathdApiException(status, "store_outcome_unknown", message, null, null) { Attempts = attempts };
        }

        /// <summary>Whether a transport failure happened before the request was sent (a refused connect).</summary>
        static bool NeverSent(PathdException e)
        {
            var inner = e.InnerException;
            while (inner != null)
            {
                var se = inner as SocketException;
                if (se != null && (se.SocketErrorCode == SocketError.ConnectionRefused ||
                                   se.SocketErrorCode == SocketError.HostNotFound)) return true;
                var we = inner as WebException;
                if (we != null && (we.Status == WebExceptionStatus.ConnectFailure ||
                                   we.Status == WebExceptionStatus.NameResolutionFailure)) return true;
                inner = inner.InnerException;
            }
            return false;
        }

        /// <summary>A change (id null for POST /v1/maps), retried when its outcome is unknown as the file comment says.</summary>
        async Task<Answer> Change(string method, string path, string id, int[] ok, string body, string contentType,
                                  WriteOptions options, CancellationToken ct)
        {
            var headers = new Dictionary<string, string>();
            if (options != null && !string.IsNullOrEmpty(options.IfMatch)) headers["If-Match"] = options.IfMatch;
            else if (options != null && options.IfNoneMatchAny) headers["If-None-Match"] = "*";
            bool conditional = headers.Count > 0, retried = false;
            int attempts = 0;
            for (int attempt = 0; ; attempt++)
            {
                Answer a = null;
                PathdException failure = null;
                try
                {
                    a = await Send(method, path, body, contentType, headers, true, ct).ConfigureAwait(false);
                    attempts += a.Attempts;
                }
                catch (PathdTimeoutException e) { failure = e; attempts += e.Attempts; }
                catch (PathdTransportException e) { failure = e; attempts += e.Attempts; }
                if (a != null && Array.IndexOf(ok, a.Status) >= 0)
                {
                    if (id != null) Remember(id, method == "DELETE" ? null : a.ETag);
                    a.Attempts = attempts;
                    return a;
                }
                if (a != null && retried && method == "DELETE" && a.Status == 404)
                {
                    if (id != null) Remember(id, null);
                    a.Status = 204;
                    a.Body = "";
                    a.Attempts = attempts;
                    return a;
                }
                var hdrs = string.Join(", ", headers.Select(h => h.Key + ": " + h.Value).ToArray());
                if (a != null && retried && a.Status == 412)
                    throw OutcomeUnknown(412, method + " " + path + ": the first attempt's outcome was unknown and its retry (" + hdrs +
                                         ") found the map changed: this change, or another, was made; read the map", attempts);
                bool unknown = a != null
                    ? a.Status == 502 || a.Status == 504 || (a.Status == 503 && (CodeOf(a.Body) ?? "store_outcome_unknown") == "store_outcome_unknown")
                    : failure is PathdTimeoutException || !NeverSent(failure);
                if (!unknown)
                {
                    if (failure != null) { failure.Attempts = attempts; throw failure; }
                    var e = ApiError(a.Status, a.Body, a.RetryAfter);
                    e.Attempts = attempts;
                    throw e;
                }
                var why = a != null ? "HTTP " + a.Status : failure.Message;
                // No retry left, or none safe: an answer says store_outcome_unknown; a
                // timeout or a lost connection is thrown as it is (which says as much).
                if (attempt >= MaxRetries)
                {
                    if (failure != null) { failure.Attempts = attempts; throw failure; }
                    throw OutcomeUnknown(a.Status, method + " " + path + ": the outcome is unknown (" + why + ") and no retry is left: read the map", attempts);
                }
                if (!retried && !conditional && id != null)
                {
                    var tag = Remembered(id);
                    if (tag != null) headers["If-Match"] = tag;
                    else if (method == "PUT") headers["If-None-Match"] = "*";
                    else if (method == "PATCH")
                    {
                        if (failure != null) { failure.Attempts = attempts; throw failure; }
                        throw OutcomeUnknown(a.Status, method + " " + path + ": the outcome is unknown (" + why +
                                             "), and no ETag of the map is known to retry it safely (pass WriteOptions.IfMatch): read the map", attempts);
                    }
                }
                retried = true;
                var wait = (a != null ? a.RetryAfter : null) ?? TimeSpan.FromSeconds(1);
                await Task.Delay(wait < MaxRetryWait ? wait : MaxRetryWait, ct).ConfigureAwait(false);
            }
        }

        /// <summary>A change's answer as a map info, with its ETag.</summary>
        static MapInfo MapOf(Answer a, string method, string path)
        {
            Json.Object o;
            try { o = Json.Obj(Json.Parse(a.Body), "the answer"); }
            catch (FormatException e) { throw new PathdProtocolException(method + " " + path + ": " + e.Message, e) { Attempts = a.Attempts }; }
            var m = Read.Map(o);
            m.Created = a.Status == 201;
            m.ETag = a.ETag;
            return m;
        }

        static string MapPath(string id, string tail = "")
        {
            if (id == null || !MapIdRe.IsMatch(id)) throw new ArgumentException("map id '" + id + "' is not [A-Za-z0-9_.-]{1,64}");
            return "/v1/maps/" + id + tail;
        }

        static string SessionPath(string mapId, string sid, string tail = "")
        {
            if (sid == null || !SessionIdRe.IsMatch(sid)) throw new ArgumentException("session id '" + sid + "' is not [A-Za-z0-9_-]{1,64}");
            return MapPath(mapId, "/sessions/" + sid + tail);
        }

        // ---- maps ----

        async Task<MapInfo> Upload(string method, string path, string id, string body, string ctype, WriteOptions options,
                                   CancellationToken ct)
        {
            var a = await Change(method, path, id, new[] { 200, 201 }, body, ctype, options, ct).ConfigureAwait(false);
            var m = MapOf(a, method, path);
            if (id == null && m.ETag != null) Remember(m.Id, m.ETag);
            return m;
        }

        /// <summary>putMap with a Moving AI .map text (text/x-movingai-map): creates (Created, version 1) or replaces (version + 1).</summary>
        public Task<MapInfo> PutMapAsync(string id, string movingAiText, CancellationToken ct = default(CancellationToken))
        {
            return Upload("PUT", MapPath(id), id, movingAiText, "text/x-movingai-map", null, ct);
        }

        /// <summary>putMap with preconditions (412 when they do not hold).</summary>
        public Task<MapInfo> PutMapAsync(string id, string movingAiText, WriteOptions options, CancellationToken ct = default(CancellationToken))
        {
            return Upload("PUT", MapPath(id), id, movingAiText, "text/x-movingai-map", options, ct);
        }

        /// <summary>putMap with a MapJson document (rows, or a GetMapCellsAsync export).</summary>
        public Task<MapInfo> PutMapJsonAsync(string id, string mapJson, CancellationToken ct = default(CancellationToken))
        {
            return Upload("PUT", MapPath(id), id, mapJson, "application/json", null, ct);
        }

        /// <summary>putMap with a MapJson document and preconditions.</summary>
        public Task<MapInfo> PutMapJsonAsync(string id, string mapJson, WriteOptions options, CancellationToken ct = default(CancellationToken))
        {
            return Upload("PUT", MapPath(id), id, mapJson, "application/json", options, ct);
        }

        /// <summary>createMap: the server picks the id from the content; the same bytes find the same map.</summary>
        public Task<MapInfo> CreateMapAsync(string body, bool json, CancellationToken ct = default(CancellationToken))
        {
            return Upload("POST", "/v1/maps", null, body, json ? "application/json" : "text/x-movingai-map", null, ct);
        }

        /// <summary>getMap</summary>
        public async Task<MapInfo> GetMapAsync(string id, CancellationToken ct = default(CancellationToken))
        {
            var a = await RequestAsync("GET", MapPath(id), null, null, ct).ConfigureAwait(false);
            if (a.Status != 200) { var e = ApiError(a.Status, a.Body, a.RetryAfter); e.Attempts = a.Attempts; throw e; }
            var m = MapOf(a, "GET", MapPath(id));
            Remember(id, m.ETag);
            return m;
        }

        /// <summary>listMaps: every map held, sorted by id.</summary>
        public async Task<List<MapInfo>> ListMapsAsync(CancellationToken ct = default(CancellationToken))
        {
            var o = await Call("GET", "/v1/maps", new[] { 200 }, null, null, ct).ConfigureAwait(false);
            var list = new List<MapInfo>();
            foreach (var m in Json.Arr(o.Get("maps"), "maps")) list.Add(Read.Map(Json.Obj(m, "maps[]")));
            return list;
        }

        /// <summary>patchMap: cells then doors, applied in order, as the next version of the world.</summary>
        public Task<MapInfo> PatchMapAsync(string id, IList<CellChange> cells, IList<DoorSwitch> doors,
                                           CancellationToken ct = default(CancellationToken))
        {
            return PatchMapAsync(id, cells, doors, null, ct);
        }

        /// <summary>patchMap with preconditions (412 when they do not hold).</summary>
        public async Task<MapInfo> PatchMapAsync(string id, IList<CellChange> cells, IList<DoorSwitch> doors,
                                                 WriteOptions options, CancellationToken ct = default(CancellationToken))
        {
            var w = new Json.Writer();
            w.Raw("{");
            bool first = true;
            if (cells != null && cells.Count > 0) { w.Raw("\"cells\":"); Write.Cells(w, cells); first = false; }
            if (doors != null && doors.Count > 0) { w.Raw(first ? "\"doors\":" : ",\"doors\":"); Write.Doors(w, doors); }
            w.Raw("}");
            var path = MapPath(id);
            var a = await Change("PATCH", path, id, new[] { 200 }, w.ToString(), "application/json", options, ct).ConfigureAwait(false);
            return MapOf(a, "PATCH", path);
        }

        /// <summary>deleteMap (ends its sessions).</summary>
        public Task DeleteMapAsync(string id, CancellationToken ct = default(CancellationToken))
        {
            return DeleteMapAsync(id, null, ct);
        }

        /// <summary>deleteMap with preconditions (412 when they do not hold).</summary>
        public Task DeleteMapAsync(string id, WriteOptions options, CancellationToken ct = default(CancellationToken))
        {
            return Change("DELETE", MapPath(id), id, new[] { 204 }, null, null, options, ct);
        }

        /// <summary>getMapCells: the export as JSON text; PutMapJsonAsync accepts it back as it is.</summary>
        public async Task<string> GetMapCellsAsync(string id, CancellationToken ct = default(CancellationToken))
        {
            var a = await RequestAsync("GET", MapPath(id, "/cells"), null, null, ct).ConfigureAwait(false);
            if (a.Status != 200) { var e = ApiError(a.Status, a.Body, a.RetryAfter); e.Attempts = a.Attempts; throw e; }
            return a.Body;
        }

        // ---- paths ----

        /// <summary>findPath</summary>
        public async Task<PathAnswer> FindPathAsync(string id, Point start, Point goal, PathOptions options = null,
                                                    CancellationToken ct = default(CancellationToken))
        {
            var w = new Json.Writer();
            Write.Query(w, start, goal, options, true);
            return Read.Path(await Call("POST", MapPath(id, "/path"), new[] { 200 }, w.ToString(), "application/json", ct).ConfigureAwait(false));
        }

        /// <summary>findPaths: a batch with one deadline (null = the server's default); a query that fails alone gets an error slot.</summary>
        public async Task<BatchAnswer> FindPathsAsync(string id, IList<PathQuery> queries, int? deadlineMs = null,
                                                      CancellationToken ct = default(CancellationToken))
        {
            if (queries == null || queries.Count == 0) throw new ArgumentException("a batch needs a query");
            var w = new Json.Writer();
            w.Raw("{\"queries\":[");
            for (int i = 0; i < queries.Count; i++)
            {
                if (i > 0) w.Raw(",");
                Write.Query(w, queries[i].Start, queries[i].Goal, queries[i].Options, false);
            }
            w.Raw("]");
            if (deadlineMs.HasValue) w.Raw(",\"deadline_ms\":" + deadlineMs.Value.ToString(CultureInfo.InvariantCulture));
            w.Raw("}");
            var o = await Call("POST", MapPath(id, "/paths"), new[] { 200 }, w.ToString(), "application/json", ct).ConfigureAwait(false);
            var b = new BatchAnswer { MapVersion = Read.Long(o, "map_version") };
            foreach (var r in Json.Arr(o.Get("results"), "results"))
            {
                var slot = Json.Obj(r, "results[]");
                var err = slot.Get("error");
                if (err != null)
                {
                    var eo = Json.Obj(err, "error");
                    b.Results.Add(new BatchSlot
                    {
                        Error = new PathdApiException((int)Read.Long(slot, "status"), eo.Get("code") as string,
                                                      eo.Get("message") as string, eo.Get("field") as string, null)
                    });
                }
                else
                {
                    b.Results.Add(new BatchSlot { Path = Read.Path(slot) });
                }
            }
            if (b.Results.Count != queries.Count)
                throw new PathdProtocolException("a batch of " + queries.Count + " queries got " + b.Results.Count + " results");
            return b;
        }

        // ---- sessions ----

        /// <summary>createSession: one moving agent (D* Lite); ttlS null = the server's default.</summary>
        public Task<SessionAnswer> CreateSessionAsync(string mapId, Point start, Point goal, int? ttlS = null,
                                                      CancellationToken ct = default(CancellationToken))
        {
            return CreateSessionAsync(mapId, start, goal, null, ttlS, ct);
        }

        /// <summary>createSession with a replanning policy (null: the server's defaults).</summary>
        public Task<SessionAnswer> CreateSessionAsync(string mapId, Point start, Point goal, ReplanPolicy replan,
                                                      int? ttlS = null, CancellationToken ct = default(CancellationToken))
        {
            return CreateSessionAsync(mapId, start, goal, replan, null, ttlS, ct);
        }

        /// <summary>createSession with a replanning policy and limits on every plan (SessionLimits; either
        /// null: none).</summary>
        public async Task<SessionAnswer> CreateSessionAsync(string mapId, Point start, Point goal, ReplanPolicy replan,
                                                            SessionLimits limits, int? ttlS = null,
                                                            CancellationToken ct = default(CancellationToken))
        {
            var w = new Json.Writer();
            w.Raw("{\"start\":"); w.Point(start); w.Raw(",\"goal\":"); w.Point(goal);
            if (ttlS.HasValue) w.Raw(",\"ttl_s\":" + ttlS.Value.ToString(CultureInfo.InvariantCulture));
            Write.Replan(w, replan, false);
            Write.Limits(w, limits);
            w.Raw("}");
            return Read.Session(await Call("POST", MapPath(mapId, "/sessions"), new[] { 201 }, w.ToString(), "application/json", ct).ConfigureAwait(false));
        }

        /// <summary>getSession: the current path, brought to the map's current version.</summary>
        public async Task<SessionAnswer> GetSessionAsync(string mapId, string sid, CancellationToken ct = default(CancellationToken))
        {
            return Read.Session(await Call("GET", SessionPath(mapId, sid), new[] { 200 }, null, null, ct).ConfigureAwait(false));
        }

        /// <summary>deleteSession</summary>
        public Task DeleteSessionAsync(string mapId, string sid, CancellationToken ct = default(CancellationToken))
        {
            return Call("DELETE", SessionPath(mapId, sid), new[] { 204 }, null, null, ct);
        }

        /// <summary>updateSession: one update as JSON, several as NDJSON (applied in order as one request,
        /// all validated first: a bad line's Field is "lines[i]..."). Answers the path after the last.</summary>
        public async Task<SessionAnswer> UpdateSessionAsync(string mapId, string sid, IList<Update> updates,
                                                            CancellationToken ct = default(CancellationToken))
        {
            if (updates == null || updates.Count == 0) throw new ArgumentException("no update");
            var w = new Json.Writer();
            foreach (var u in updates)
            {
                Write.Update(w, u);
                if (updates.Count > 1) w.Raw("\n");
            }
            return Read.Session(await Call("POST", SessionPath(mapId, sid, "/updates"), new[] { 200 }, w.ToString(),
                                           updates.Count > 1 ? "application/x-ndjson" : "application/json", ct).ConfigureAwait(false));
        }

        public Task<SessionAnswer> UpdateSessionAsync(string mapId, string sid, Update update, CancellationToken ct = default(CancellationToken))
        {
            return UpdateSessionAsync(mapId, sid, new[] { update }, ct);
        }

        /// <summary>streamSession: a WebSocket; a refused handshake throws PathdApiException (a 503 is retried).</summary>
        public async Task<SessionStream> OpenStreamAsync(string mapId, string sid, CancellationToken ct = default(CancellationToken))
        {
            var uri = new Uri((baseUrl.StartsWith("https", StringComparison.OrdinalIgnoreCase) ? "wss" : "ws") +
                              baseUrl.Substring(baseUrl.IndexOf(':')) + SessionPath(mapId, sid, "/stream"));
            for (int attempt = 0; ; attempt++)
            {
                try
                {
                    return await SessionStream.ConnectAsync(this, uri, ct).ConfigureAwait(false);
                }
                catch (PathdApiException e) when (e.Status == 503 && attempt < MaxRetries)
                {
                    var wait = e.RetryAfter ?? TimeSpan.FromSeconds(1);
                    await Task.Delay(wait < MaxRetryWait ? wait : MaxRetryWait, ct).ConfigureAwait(false);
                }
            }
        }

        // ---- waypoint graphs (kind "graph") ----

        /// <summary>putMap of a graph (nodes and edges, or GraphUpload.Dimacs); MapInfo.Graph describes it.</summary>
        public Task<MapInfo> PutGraphAsync(string id, GraphUpload graph, WriteOptions options = null,
                                           CancellationToken ct = default(CancellationToken))
        {
            return Upload("PUT", MapPath(id), id, Write.Graph(graph), "application/json", options, ct);
        }

        /// <summary>createMap of a graph: the server picks the id from the content.</summary>
        public Task<MapInfo> CreateGraphAsync(GraphUpload graph, CancellationToken ct = default(CancellationToken))
        {
            return Upload("POST", "/v1/maps", null, Write.Graph(graph), "application/json", null, ct);
        }

        /// <summary>patchMap of a graph: nodes and edges enabled or disabled, edge costs set, as the next version.</summary>
        public async Task<MapInfo> PatchGraphAsync(string id, GraphPatch patch, WriteOptions options = null,
                                                   CancellationToken ct = default(CancellationToken))
        {
            var path = MapPath(id);
            var a = await Change("PATCH", path, id, new[] { 200 }, Write.Patch(patch), "application/json", options, ct).ConfigureAwait(false);
            return MapOf(a, "PATCH", path);
        }

        /// <summary>getMapGraph: the graph as this version has it (ToUpload builds it again).</summary>
        public async Task<GraphExport> GetGraphAsync(string id, CancellationToken ct = default(CancellationToken))
        {
            var a = await RequestAsync("GET", MapPath(id, "/graph"), null, null, ct).ConfigureAwait(false);
            if (a.Status != 200) { var e = ApiError(a.Status, a.Body, a.RetryAfter); e.Attempts = a.Attempts; throw e; }
            Json.Object o;
            try { o = Json.Obj(Json.Parse(a.Body), "the answer"); }
            catch (FormatException e) { throw new PathdProtocolException("GET " + MapPath(id, "/graph") + ": " + e.Message, e) { Attempts = a.Attempts }; }
            var g = Read.Export(o);
            g.ETag = a.ETag;
            return g;
        }

        /// <summary>findPath on a graph map, between node ids or points (the answer's Start and Goal say where they snapped).</summary>
        public async Task<GraphPathAnswer> FindGraphPathAsync(string id, GraphPlace start, GraphPlace goal, GraphPathOptions options = null,
                                                              CancellationToken ct = default(CancellationToken))
        {
            var w = new Json.Writer();
            Write.GraphQuery(w, new GraphQuery { Start = start, Goal = goal, Options = options }, true);
            return Read.GraphPath(await Call("POST", MapPath(id, "/path"), new[] { 200 }, w.ToString(), "application/json", ct).ConfigureAwait(false));
        }

        /// <summary>findPath to the cheapest of several goals (the answer's GoalIndex names it).</summary>
        public async Task<GraphPathAnswer> FindNearestGoalAsync(string id, GraphPlace start, IList<GraphPlace> goals, GraphPathOptions options = null,
                                                                CancellationToken ct = default(CancellationToken))
        {
            var w = new Json.Writer();
            Write.GraphQuery(w, new GraphQuery { Start = start, Goals = goals.ToList(), Options = options }, true);
            return Read.GraphPath(await Call("POST", MapPath(id, "/path"), new[] { 200 }, w.ToString(), "application/json", ct).ConfigureAwait(false));
        }

        /// <summary>findPaths on a graph map: one deadline (null = the server's default); a query that fails alone gets an error slot.</summary>
        public async Task<GraphBatchAnswer> FindGraphPathsAsync(string id, IList<GraphQuery> queries, int? deadlineMs = null,
                                                                CancellationToken ct = default(CancellationToken))
        {
            if (queries == null || queries.Count == 0) throw new ArgumentException("a batch needs a query");
            var w = new Json.Writer();
            w.Raw("{\"queries\":[");
            for (int i = 0; i < queries.Count; i++)
            {
                if (i > 0) w.Raw(",");
                Write.GraphQuery(w, queries[i], false);
            }
            w.Raw("]");
            if (deadlineMs.HasValue) w.Raw(",\"deadline_ms\":" + deadlineMs.Value.ToString(CultureInfo.InvariantCulture));
            w.Raw("}");
            var o = await Call("POST", MapPath(id, "/paths"), new[] { 200 }, w.ToString(), "application/json", ct).ConfigureAwait(false);
            var b = new GraphBatchAnswer { MapVersion = Read.Long(o, "map_version") };
            foreach (var r in Json.Arr(o.Get("results"), "results"))
            {
                var slot = Json.Obj(r, "results[]");
                var err = Json.Obj(slot.Get("error"), null);
                if (err != null)
                    b.Results.Add(new GraphBatchSlot
                    {
                        Error = new PathdApiException((int)Read.Long(slot, "status"), err.Get("code") as string,
                                                      err.Get("message") as string, err.Get("field") as string, null)
                    });
                else
                    b.Results.Add(new GraphBatchSlot { Path = Read.GraphPath(slot) });
            }
            if (b.Results.Count != queries.Count)
                throw new PathdProtocolException("a batch of " + queries.Count + " queries got " + b.Results.Count + " results");
            return b;
        }

        /// <summary>getDistanceTable on a graph map: Costs[i][j] from source i to target j (targets null: the sources).</summary>
        public async Task<GraphTable> GraphTableAsync(string id, IList<GraphPlace> sources, IList<GraphPlace> targets = null, bool paths = false,
                                                      int? deadlineMs = null, CancellationToken ct = default(CancellationToken))
        {
            if (sources == null || sources.Count == 0) throw new ArgumentException("a table needs a source");
            var w = new Json.Writer();
            w.Raw("{\"sources\":"); Write.Places(w, sources, false);
            if (targets != null) { w.Raw(",\"targets\":"); Write.Places(w, targets, false); }
            if (paths) w.Raw(",\"paths\":true");
            if (deadlineMs.HasValue) w.Raw(",\"deadline_ms\":" + deadlineMs.Value.ToString(CultureInfo.InvariantCulture));
            w.Raw("}");
            return Read.Table(await Call("POST", MapPath(id, "/table"), new[] { 200 }, w.ToString(), "application/json", ct).ConfigureAwait(false));
        }

        /// <summary>createSession on a graph map: one agent between nodes (ids, or points snapped to nodes; both of one form),
        /// repaired after moves and PATCHes.</summary>
        public Task<GraphSessionAnswer> CreateGraphSessionAsync(string mapId, GraphPlace start, GraphPlace goal, ReplanPolicy replan = null,
                                                                int? ttlS = null, CancellationToken ct = default(CancellationToken))
        {
            return CreateGraphSessionAsync(mapId, start, goal, replan, null, ttlS, ct);
        }

        /// <summary>createSession on a graph map with limits on every plan (SessionLimits; null: none).</summary>
        public async Task<GraphSessionAnswer> CreateGraphSessionAsync(string mapId, GraphPlace start, GraphPlace goal, ReplanPolicy replan,
                                                                      SessionLimits limits, int? ttlS = null,
                                                                      CancellationToken ct = default(CancellationToken))
        {
            var w = new Json.Writer();
            w.Raw("{\"start\":"); Write.Place(w, start, true); w.Raw(",\"goal\":"); Write.Place(w, goal, true);
            if (ttlS.HasValue) w.Raw(",\"ttl_s\":" + ttlS.Value.ToString(CultureInfo.InvariantCulture));
            Write.Replan(w, replan, false);
            Write.Limits(w, limits);
            w.Raw("}");
            return Read.GraphSession(await Call("POST", MapPath(mapId, "/sessions"), new[] { 201 }, w.ToString(), "application/json", ct).ConfigureAwait(false));
        }

        /// <summary>getSession of a graph session, brought to the map's current version.</summary>
        public async Task<GraphSessionAnswer> GetGraphSessionAsync(string mapId, string sid, CancellationToken ct = default(CancellationToken))
        {
            return Read.GraphSession(await Call("GET", SessionPath(mapId, sid), new[] { 200 }, null, null, ct).ConfigureAwait(false));
        }

        /// <summary>updateSession of a graph session: one update as JSON, several as NDJSON.</summary>
        public async Task<GraphSessionAnswer> UpdateGraphSessionAsync(string mapId, string sid, IList<GraphUpdate> updates,
                                                                      CancellationToken ct = default(CancellationToken))
        {
            if (updates == null || updates.Count == 0) throw new ArgumentException("no update");
            var w = new Json.Writer();
            foreach (var u in updates)
            {
                Write.GraphUpdate(w, u);
                if (updates.Count > 1) w.Raw("\n");
            }
            return Read.GraphSession(await Call("POST", SessionPath(mapId, sid, "/updates"), new[] { 200 }, w.ToString(),
                                                updates.Count > 1 ? "application/x-ndjson" : "application/json", ct).ConfigureAwait(false));
        }

        public Task<GraphSessionAnswer> UpdateGraphSessionAsync(string mapId, string sid, GraphUpdate update, CancellationToken ct = default(CancellationToken))
        {
            return UpdateGraphSessionAsync(mapId, sid, new[] { update }, ct);
        }

        // ---- reading and writing the API's JSON ----

        internal static class Read
        {
            public static long Long(Json.Object o, string key)
            {
                var d = o.Get(key) as double?;
                return d.HasValue ? (long)d.Value : 0;
            }

            static bool Bool(Json.Object o, string key) { return o.Get(key) is bool && (bool)o.Get(key); }

            static Point Pt(object v, string what)
            {
                var a = Json.Arr(v, what);
                if (a.Count != 2 || !(a[0] is double) || !(a[1] is double)) throw new PathdProtocolException(what + " is not a point");
                return new Point((int)(double)a[0], (int)(double)a[1]);
            }

            static List<Point> Pts(object v, string what)
            {
                var list = new List<Point>();
                foreach (var p in Json.Arr(v, what)) list.Add(Pt(p, what + "[]"));
                return list;
            }

            public static MapInfo Map(Json.Object o)
            {
                if (o == null || !(o.Get("id") is string)) throw new PathdProtocolException("a map info without an id");
                return new MapInfo
                {
                    Id = (string)o.Get("id"),
                    Version = Long(o, "version"),
                    Width = (int)Long(o, "width"),
                    Height = (int)Long(o, "height"),
                    Connectivity = (int)Long(o, "connectivity"),
                    CornerCutting = Bool(o, "corner_cutting"),
                    WalkableCells = Long(o, "walkable_cells"),
                    UniformCost = Bool(o, "uniform_cost"),
                    Doors = (int)Long(o, "doors"),
                    MemoryBytes = Long(o, "memory_bytes"),
                    JpsLandmarks = (int)Long(o, "jps_landmarks"),
                    BuildUs = Long(o, "build_us"),
                    DefaultAlgorithm = o.Get("default_algorithm") as string,
                    HasHierarchy = o.Get("hierarchy") is Json.Object,
                    Kind = o.Get("kind") as string ?? "grid",
                    Graph = GraphInfoOf(Json.Obj(o.Get("graph"), null)),
                };
            }

            static GraphInfo GraphInfoOf(Json.Object g)
            {
                if (g == null) return null;
                return new GraphInfo
                {
                    Nodes = Long(g, "nodes"), Edges = Long(g, "edges"), Arcs = Long(g, "arcs"),
                    Dimensions = (int)Long(g, "dimensions"), MaxDegree = (int)Long(g, "max_degree"),
                    DisabledNodes = Long(g, "disabled_nodes"), DisabledEdges = Long(g, "disabled_edges"),
                    HeuristicRatio = g.Get("heuristic_ratio") is double ? (double)g.Get("heuristic_ratio") : 0,
                    Landmarks = (int)Long(g, "landmarks"),
                    LandmarkScale = g.Get("landmark_scale") is double ? (double)g.Get("landmark_scale") : 0,
                    Components = Long(g, "components"),
                    Doors = (g.Get("doors") as List<object> ?? new List<object>()).Select(x => Json.Obj(x, "graph.doors[]")).Select(d => new GraphDoorInfo
                    {
                        Name = d.Get("name") as string,
                        Open = Bool(d, "open"),
                        Edges = Long(d, "edges"),
                        Nodes = Long(d, "nodes"),
                    }).ToList(),
                };
            }

            public static GraphNodeId NodeId(object v, string what)
            {
                if (v is string) return new GraphNodeId((string)v);
                if (v is double) return new GraphNodeId((long)(double)v);
                throw new PathdProtocolException(what + " is not a node id");
            }

            static List<GraphNodeId> NodeIds(object v, string what)
            {
                var list = new List<GraphNodeId>();
                foreach (var x in Json.Arr(v, what)) list.Add(NodeId(x, what + "[]"));
                return list;
            }

            static double[] Coords(object v, string what)
            {
                var a = Json.Arr(v, what);
                var c = new double[a.Count];
                for (int i = 0; i < a.Count; i++)
                {
                    if (!(a[i] is double)) throw new PathdProtocolException(what + " is not a position");
                    c[i] = (double)a[i];
                }
                return c;
            }

            static List<int> Ints(object v, string what)
            {
                var list = new List<int>();
                foreach (var x in Json.Arr(v, what))
                {
                    if (!(x is double)) throw new PathdProtocolException(what + " is not a list of integers");
                    list.Add((int)(double)x);
                }
                return list;
            }

            static List<double[]> Positions(object v, string what)
            {
                var list = new List<double[]>();
                foreach (var x in Json.Arr(v, what)) list.Add(Coords(x, what + "[]"));
                return list;
            }

            static List<string> Strings(object v)
            {
                var a = v as List<object>;
                return a == null ? null : a.Select(x => x as string).ToList();
            }

            public static GraphEnd End(Json.Object o)
            {
                if (o == null) return null;
                return new GraphEnd
                {
                    Node = o.Get("node") != null ? NodeId(o.Get("node"), "node") : (GraphNodeId?)null,
                    Snapped = Bool(o, "snapped"),
                    Distance = o.Get("distance") as double?,
                    Edge = o.Get("edge") is double ? (int?)(int)(double)o.Get("edge") : null,
                    At = o.Get("at") as double?,
                    Point = o.Get("point") != null ? Coords(o.Get("point"), "point") : null,
                };
            }

            public static GraphPathAnswer GraphPath(Json.Object o)
            {
                if (o == null || !(o.Get("found") is bool)) throw new PathdProtocolException("a graph path answer without 'found'");
                var stats = Json.Obj(o.Get("stats"), null) ?? new Json.Object();
                var p = new GraphPathAnswer
                {
                    Found = (bool)o.Get("found"),
                    GoalIndex = o.Get("goal_index") is double ? (int?)(int)(double)o.Get("goal_index") : null,
                    Partial = Bool(o, "partial"),
                    Reason = o.Get("reason") as string,
                    Cost = o.Get("cost") is double ? (double)o.Get("cost") : 0,
                    Path = NodeIds(o.Get("path"), "path"),
                    Edges = Ints(o.Get("edges"), "edges"),
                    Points = Positions(o.Get("points"), "points"),
                    Start = End(Json.Obj(o.Get("start"), null)),
                    Goal = End(Json.Obj(o.Get("goal"), null)),
                    Algorithm = o.Get("algorithm") as string,
                    MapVersion = Long(o, "map_version"),
                    Expanded = Long(stats, "expanded"),
                    TimeUs = Long(stats, "time_us"),
                    Cached = Bool(stats, "cached"),
                };
                if (p.Found && !(o.Get("cost") is double)) throw new PathdProtocolException("a found path without 'cost'");
                return p;
            }

            public static GraphTable Table(Json.Object o)
            {
                var t = new GraphTable { Algorithm = o.Get("algorithm") as string, MapVersion = Long(o, "map_version") };
                foreach (var row in Json.Arr(o.Get("costs"), "costs"))
                    t.Costs.Add(Json.Arr(row, "costs[]").Select(x => x as double?).ToList());
                if (o.Get("paths") != null)
                {
                    t.Paths = new List<List<List<GraphNodeId>>>();
                    foreach (var row in Json.Arr(o.Get("paths"), "paths"))
                        t.Paths.Add(Json.Arr(row, "paths[]").Select(x => x == null ? null : NodeIds(x, "paths[][]")).ToList());
                }
                foreach (var e in Json.Arr(o.Get("sources"), "sources")) t.Sources.Add(End(Json.Obj(e, "sources[]")));
                foreach (var e in Json.Arr(o.Get("targets"), "targets")) t.Targets.Add(End(Json.Obj(e, "targets[]")));
                var stats = Json.Obj(o.Get("stats"), null) ?? new Json.Object();
                t.Searches = Long(stats, "searches");
                t.Expanded = Long(stats, "expanded");
                t.Unreachable = Long(stats, "unreachable");
                t.TimeUs = Long(stats, "time_us");
                return t;
            }

            public static GraphExport Export(Json.Object o)
            {
                var g = new GraphExport { Map = o.Get("map") as string, Version = Long(o, "version"), Dimensions = (int)Long(o, "dimensions") };
                foreach (var x in Json.Arr(o.Get("nodes"), "nodes"))
                {
                    var n = Json.Obj(x, "nodes[]");
                    g.Nodes.Add(new GraphNode
                    {
                        Id = NodeId(n.Get("id"), "nodes[].id"),
                        Position = Coords(n.Get("position"), "nodes[].position"),
                        Tags = Strings(n.Get("tags")),
                        Enabled = n.Get("enabled") is bool ? (bool?)(bool)n.Get("enabled") : null,
                    });
                }
                foreach (var x in Json.Arr(o.Get("edges"), "edges"))
                {
                    var e = Json.Obj(x, "edges[]");
                    g.Edges.Add(new GraphEdge
                    {
                        From = NodeId(e.Get("from"), "edges[].from"),
                        To = NodeId(e.Get("to"), "edges[].to"),
                        Cost = e.Get("cost") as double?,
                        OneWay = Bool(e, "oneway"),
                        Id = e.Get("id") as string,
                        Tags = Strings(e.Get("tags")),
                        Enabled = e.Get("enabled") is bool ? (bool?)(bool)e.Get("enabled") : null,
                    });
                }
                return g;
            }

            public static GraphSessionAnswer GraphSession(Json.Object o)
            {
                if (o == null || !(o.Get("session_id") is string) || !(o.Get("found") is bool))
                    throw new PathdProtocolException("a graph session answer without its fields");
                var stats = Json.Obj(o.Get("stats"), null) ?? new Json.Object();
                var replan = Json.Obj(o.Get("replan"), null) ?? new Json.Object();
                bool unchanged = o.Get("unchanged") is bool && (bool)o.Get("unchanged");
                return new GraphSessionAnswer
                {
                    Unchanged = unchanged,
                    ReplanReason = replan.Get("reason") as string,
                    Replanned = replan.Get("replanned") is bool && (bool)replan.Get("replanned"),
                    ReplanRoute = replan.Get("route") as string,
                    Flip = replan.Get("flip") is bool && (bool)replan.Get("flip"),
                    Policy = Policy(Json.Obj(replan.Get("policy"), null)),
                    SessionId = (string)o.Get("session_id"),
                    MapId = o.Get("map_id") as string,
                    Found = (bool)o.Get("found"),
                    Cost = o.Get("cost") is double ? (double)o.Get("cost") : 0,
                    Reason = o.Get("reason") as string,
                    Path = unchanged || o.Get("path") == null ? new List<GraphNodeId>() : NodeIds(o.Get("path"), "path"),
                    Edges = unchanged || o.Get("edges") == null ? new List<int>() : Ints(o.Get("edges"), "edges"),
                    Points = unchanged || o.Get("points") == null ? new List<double[]>() : Positions(o.Get("points"), "points"),
                    Position = NodeId(o.Get("position"), "position"),
                    Goal = NodeId(o.Get("goal"), "goal"),
                    Algorithm = o.Get("algorithm") as string,
                    MapVersion = Long(o, "map_version"),
                    TtlS = Long(o, "ttl_s"),
                    Expanded = Long(stats, "expanded"),
                    TimeUs = Long(stats, "time_us"),
                    Updates = Long(stats, "updates"),
                    MemoryBytes = Long(stats, "memory_bytes"),
                    Rebase = stats.Get("rebase") as string,
                };
            }

            public static PathAnswer Path(Json.Object o)
            {
                if (o == null || !(o.Get("found") is bool)) throw new PathdProtocolException("a path answer without 'found'");
                var stats = Json.Obj(o.Get("stats"), null) ?? new Json.Object();
                var p = new PathAnswer
                {
                    Found = (bool)o.Get("found"),
                    Cost = o.Get("cost") is double ? (double)o.Get("cost") : 0,
                    Reason = o.Get("reason") as string,
                    Path = Pts(o.Get("path"), "path"),
                    Algorithm = o.Get("algorithm") as string,
                    MapVersion = Long(o, "map_version"),
                    Expanded = Long(stats, "expanded"),
                    TimeUs = Long(stats, "time_us"),
                    Cached = Bool(stats, "cached"),
                };
                if (p.Found && !(o.Get("cost") is double)) throw new PathdProtocolException("a found path without 'cost'");
                return p;
            }

            static ReplanPolicy Policy(Json.Object p)
            {
                if (p == null) return null;
                return new ReplanPolicy
                {
                    MinIntervalMs = p.Get("min_interval_ms") is double ? (long?)Long(p, "min_interval_ms") : null,
                    MinUpdates = p.Get("min_updates") is double ? (long?)Long(p, "min_updates") : null,
                    GoalThreshold = p.Get("goal_threshold") as double?,
                    Hysteresis = p.Get("hysteresis") as double?,
                };
            }

            public static SessionAnswer Session(Json.Object o)
            {
                if (o == null || !(o.Get("session_id") is string) || !(o.Get("found") is bool))
                    throw new PathdProtocolException("a session answer without its fields");
                var stats = Json.Obj(o.Get("stats"), null) ?? new Json.Object();
                var replan = Json.Obj(o.Get("replan"), null) ?? new Json.Object();
                bool unchanged = o.Get("unchanged") is bool && (bool)o.Get("unchanged");
                return new SessionAnswer
                {
                    Unchanged = unchanged,
                    ReplanReason = replan.Get("reason") as string,
                    Replanned = replan.Get("replanned") is bool && (bool)replan.Get("replanned"),
                    ReplanRoute = replan.Get("route") as string,
                    Flip = replan.Get("flip") is bool && (bool)replan.Get("flip"),
                    Policy = Policy(Json.Obj(replan.Get("policy"), null)),
                    SessionId = (string)o.Get("session_id"),
                    MapId = o.Get("map_id") as string,
                    Found = (bool)o.Get("found"),
                    Cost = o.Get("cost") is double ? (double)o.Get("cost") : 0,
                    Reason = o.Get("reason") as string,
                    Path = unchanged ? new List<Point>() : Pts(o.Get("path"), "path"),
                    Position = Pt(o.Get("position"), "position"),
                    Goal = Pt(o.Get("goal"), "goal"),
                    MapVersion = Long(o, "map_version"),
                    TtlS = Long(o, "ttl_s"),
                    Expanded = Long(stats, "expanded"),
                    TimeUs = Long(stats, "time_us"),
                    Updates = Long(stats, "updates"),
                    MemoryBytes = Long(stats, "memory_bytes"),
                    Rebase = stats.Get("rebase") as string,
                };
            }
        }

        internal static class Write
        {
            public static void Cells(Json.Writer w, IList<CellChange> cells)
            {
                w.Raw("[");
                for (int i = 0; i < cells.Count; i++)
                {
                    if (i > 0) w.Raw(",");
                    w.Raw("{\"x\":" + cells[i].X.ToString(CultureInfo.InvariantCulture) + ",\"y\":" +
                          cells[i].Y.ToString(CultureInfo.InvariantCulture) + ",\"cost\":" +
                          cells[i].Cost.ToString(CultureInfo.InvariantCulture) + "}");
                }
                w.Raw("]");
            }

            public static void Doors(Json.Writer w, IList<DoorSwitch> doors)
            {
                w.Raw("[");
                for (int i = 0; i < doors.Count; i++)
                {
                    if (i > 0) w.Raw(",");
                    w.Raw("{\"id\":"); w.String(doors[i].Id ?? ""); w.Raw(doors[i].Open ? ",\"open\":true}" : ",\"open\":false}");
                }
                w.Raw("]");
            }

            public static void Query(Json.Writer w, Point start, Point goal, PathOptions o, bool deadline)
            {
                w.Raw("{\"start\":"); w.Point(start); w.Raw(",\"goal\":"); w.Point(goal);
                if (o != null)
                {
                    if (o.Algorithm != null) { w.Raw(",\"algorithm\":"); w.String(o.Algorithm); }
                    if (o.Weight.HasValue) w.Raw(",\"weight\":" + o.Weight.Value.ToString("R", CultureInfo.InvariantCulture));
                    if (o.Heuristic != null) { w.Raw(",\"heuristic\":"); w.String(o.Heuristic); }
                    if (o.Smooth.HasValue) w.Raw(o.Smooth.Value ? ",\"smooth\":true" : ",\"smooth\":false");
                    if (o.Debug.HasValue) w.Raw(o.Debug.Value ? ",\"debug\":true" : ",\"debug\":false");
                    if (o.Cache.HasValue) w.Raw(o.Cache.Value ? ",\"cache\":true" : ",\"cache\":false");
                    if (deadline && o.DeadlineMs.HasValue) w.Raw(",\"deadline_ms\":" + o.DeadlineMs.Value.ToString(CultureInfo.InvariantCulture));
                    if (o.MaxExpanded.HasValue) w.Raw(",\"max_expanded\":" + o.MaxExpanded.Value.ToString(CultureInfo.InvariantCulture));
                }
                w.Raw("}");
            }

            public static void Update(Json.Writer w, Update u)
            {
                bool first = true;
                w.Raw("{");
                if (u.Position.HasValue) { w.Raw("\"position\":"); w.Point(u.Position.Value); first = false; }
                if (u.Goal.HasValue) { w.Raw(first ? "\"goal\":" : ",\"goal\":"); w.Point(u.Goal.Value); first = false; }
                if (u.Cells != null && u.Cells.Count > 0) { w.Raw(first ? "\"cells\":" : ",\"cells\":"); Cells(w, u.Cells); first = false; }
                if (u.Doors != null && u.Doors.Count > 0) { w.Raw(first ? "\"doors\":" : ",\"doors\":"); Doors(w, u.Doors); first = false; }
                Replan(w, u.Replan, first);
                w.Raw("}");
            }

            static void Tags(Json.Writer w, List<string> tags)
            {
                if (tags == null) return;
                w.Raw(",\"tags\":[");
                for (int i = 0; i < tags.Count; i++) { if (i > 0) w.Raw(","); w.String(tags[i]); }
                w.Raw("]");
            }

            static void Num(Json.Writer w, string name, double v)
            {
                if (double.IsNaN(v) || double.IsInfinity(v)) throw new ArgumentException(name + " is not a finite number");
                w.Raw(",\"" + name + "\":" + v.ToString("R", CultureInfo.InvariantCulture));
            }

            static void Coords(Json.Writer w, double[] c)
            {
                w.Raw("[");
                for (int i = 0; i < c.Length; i++)
                {
                    if (double.IsNaN(c[i]) || double.IsInfinity(c[i])) throw new ArgumentException("a coordinate is not a finite number");
                    if (i > 0) w.Raw(",");
                    w.Raw(c[i].ToString("R", CultureInfo.InvariantCulture));
                }
                w.Raw("]");
            }

            public static string Graph(GraphUpload g)
            {
                if (g == null) throw new ArgumentNullException(nameof(g));
                var w = new Json.Writer();
                w.Raw("{\"kind\":\"graph\"");
                if (g.DimacsGr != null || g.DimacsCo != null)
                {
                    w.Raw(",\"dimacs\":{\"gr\":"); w.String(g.DimacsGr ?? ""); w.Raw(",\"co\":"); w.String(g.DimacsCo ?? ""); w.Raw("}}");
                    return w.ToString();
                }
                w.Raw(",\"nodes\":[");
                for (int i = 0; i < g.Nodes.Count; i++)
                {
                    var n = g.Nodes[i];
                    if (i > 0) w.Raw(",");
                    w.Raw("{\"id\":"); n.Id.Write(w); w.Raw(",\"position\":"); Coords(w, n.Position ?? new double[0]);
                    Tags(w, n.Tags);
                    if (n.Enabled.HasValue) w.Raw(n.Enabled.Value ? ",\"enabled\":true" : ",\"enabled\":false");
                    w.Raw("}");
                }
                w.Raw("],\"edges\":[");
                for (int i = 0; i < g.Edges.Count; i++)
                {
                    var e = g.Edges[i];
                    if (i > 0) w.Raw(",");
                    w.Raw("{\"from\":"); e.From.Write(w); w.Raw(",\"to\":"); e.To.Write(w);
                    if (e.Cost.HasValue) Num(w, "cost", e.Cost.Value);
                    if (e.Factor.HasValue) Num(w, "factor", e.Factor.Value);
                    if (e.OneWay) w.Raw(",\"oneway\":true");
                    if (e.Id != null) { w.Raw(",\"id\":"); w.String(e.Id); }
                    Tags(w, e.Tags);
                    if (e.Enabled.HasValue) w.Raw(e.Enabled.Value ? ",\"enabled\":true" : ",\"enabled\":false");
                    w.Raw("}");
                }
                w.Raw("]");
                if (g.CostFactor.HasValue) Num(w, "cost_factor", g.CostFactor.Value);
                if (g.Doors != null && g.Doors.Count > 0)
                {
                    w.Raw(",\"doors\":[");
                    for (int i = 0; i < g.Doors.Count; i++)
                    {
                        var d = g.Doors[i];
                        if (i > 0) w.Raw(",");
                        w.Raw("{\"name\":"); w.String(d.Name ?? "");
                        w.Raw(",\"edges\":[");
                        var members = d.EdgeIndices.Select(x => x.ToString(CultureInfo.InvariantCulture)).ToList();
                        foreach (var id in d.EdgeIds) { var sw = new Json.Writer(); sw.String(id); members.Add(sw.ToString()); }
                        w.Raw(string.Join(",", members));
                        w.Raw("],\"nodes\":[");
                        for (int k = 0; k < d.Nodes.Count; k++) { if (k > 0) w.Raw(","); d.Nodes[k].Write(w); }
                        w.Raw(d.Open ? "]}" : "],\"open\":false}");
                    }
                    w.Raw("]");
                }
                w.Raw("}");
                return w.ToString();
            }

            public static string Patch(GraphPatch p)
            {
                if (p == null) throw new ArgumentNullException(nameof(p));
                var w = new Json.Writer();
                w.Raw("{");
                if (p.Doors.Count > 0) { w.Raw("\"doors\":["); for (int i = 0; i < p.Doors.Count; i++) { if (i > 0) w.Raw(","); w.Raw("{\"name\":"); w.String(p.Doors[i].Id ?? ""); w.Raw(p.Doors[i].Open ? ",\"open\":true}" : ",\"open\":false}"); } w.Raw("],"); }
                w.Raw("\"nodes\":[");
                for (int i = 0; i < p.Nodes.Count; i++)
                {
                    if (i > 0) w.Raw(",");
                    w.Raw("{\"id\":"); p.Nodes[i].Key.Write(w); w.Raw(p.Nodes[i].Value ? ",\"enabled\":true}" : ",\"enabled\":false}");
                }
                w.Raw("],\"edges\":[");
                for (int i = 0; i < p.Edges.Count; i++)
                {
                    var e = p.Edges[i];
                    if (i > 0) w.Raw(",");
                    if (e.Index.HasValue) w.Raw("{\"index\":" + e.Index.Value.ToString(CultureInfo.InvariantCulture));
                    else { w.Raw("{\"id\":"); w.String(e.Id ?? ""); }
                    if (e.Enabled.HasValue) w.Raw(e.Enabled.Value ? ",\"enabled\":true" : ",\"enabled\":false");
                    if (e.Cost.HasValue) Num(w, "cost", e.Cost.Value);
                    w.Raw("}");
                }
                w.Raw("]}");
                return w.ToString();
            }

            /// <summary>A place: an id, or a point ({"point":[...]} in queries; a bare array in sessions).</summary>
            public static void Place(Json.Writer w, GraphPlace p, bool session)
            {
                if (p == null) throw new ArgumentNullException("a graph place");
                if (p.Node.HasValue) { p.Node.Value.Write(w); return; }
                if (p.Point == null) throw new ArgumentException("a graph place with neither a node nor a point");
                if (session) { Coords(w, p.Point); return; }
                w.Raw("{\"point\":"); Coords(w, p.Point); w.Raw("}");
            }

            public static void Places(Json.Writer w, IList<GraphPlace> places, bool session)
            {
                w.Raw("[");
                for (int i = 0; i < places.Count; i++) { if (i > 0) w.Raw(","); Place(w, places[i], session); }
                w.Raw("]");
            }

            public static void GraphQuery(Json.Writer w, GraphQuery q, bool deadline)
            {
                w.Raw("{\"start\":"); Place(w, q.Start, false);
                if (q.Goals != null) { w.Raw(",\"goals\":"); Places(w, q.Goals, false); }
                else { w.Raw(",\"goal\":"); Place(w, q.Goal, false); }
                var o = q.Options;
                if (o != null)
                {
                    if (o.Algorithm != null) { w.Raw(",\"algorithm\":"); w.String(o.Algorithm); }
                    if (o.MaxExpanded.HasValue) w.Raw(",\"max_expanded\":" + o.MaxExpanded.Value.ToString(CultureInfo.InvariantCulture));
                    if (o.Partial.HasValue) w.Raw(o.Partial.Value ? ",\"partial\":true" : ",\"partial\":false");
                    if (o.Cache.HasValue) w.Raw(o.Cache.Value ? ",\"cache\":true" : ",\"cache\":false");
                    if (deadline && o.DeadlineMs.HasValue) w.Raw(",\"deadline_ms\":" + o.DeadlineMs.Value.ToString(CultureInfo.InvariantCulture));
                    if (o.ExcludeTags != null)
                    {
                        w.Raw(",\"exclude_tags\":[");
                        for (int i = 0; i < o.ExcludeTags.Count; i++) { if (i > 0) w.Raw(","); w.String(o.ExcludeTags[i]); }
                        w.Raw("]");
                    }
                    if (o.SnapToEdge) w.Raw(",\"snap\":\"edge\"");
                }
                w.Raw("}");
            }

            public static void GraphUpdate(Json.Writer w, GraphUpdate u)
            {
                bool first = true;
                w.Raw("{");
                if (u.Position != null) { w.Raw("\"position\":"); Place(w, u.Position, true); first = false; }
                if (u.Goal != null) { w.Raw(first ? "\"goal\":" : ",\"goal\":"); Place(w, u.Goal, true); first = false; }
                Replan(w, u.Replan, first);
                w.Raw("}");
            }

            /// <summary>"replan":{...} with the members that are set (a leading comma unless first).</summary>
            public static void Replan(Json.Writer w, ReplanPolicy p, bool first)
            {
                if (p == null) return;
                foreach (var d in new[] { p.GoalThreshold, p.Hysteresis })
                    if (d.HasValue && (double.IsNaN(d.Value) || double.IsInfinity(d.Value)))
                        throw new ArgumentException("a replan member is not a number");
                var parts = new List<string>();
                var inv = CultureInfo.InvariantCulture;
                if (p.MinIntervalMs.HasValue) parts.Add("\"min_interval_ms\":" + p.MinIntervalMs.Value.ToString(inv));
                if (p.MinUpdates.HasValue) parts.Add("\"min_updates\":" + p.MinUpdates.Value.ToString(inv));
                if (p.GoalThreshold.HasValue) parts.Add("\"goal_threshold\":" + p.GoalThreshold.Value.ToString("R", inv));
                if (p.Hysteresis.HasValue) parts.Add("\"hysteresis\":" + p.Hysteresis.Value.ToString("R", inv));
                w.Raw((first ? "\"replan\":{" : ",\"replan\":{") + string.Join(",", parts) + "}");
            }

            /// <summary>A session's limits as members of its create body (the null ones not sent).</summary>
            public static void Limits(Json.Writer w, SessionLimits l)
            {
                if (l == null) return;
                var inv = CultureInfo.InvariantCulture;
                if (l.MaxExpanded.HasValue) w.Raw(",\"max_expanded\":" + l.MaxExpanded.Value.ToString(inv));
                if (l.DeadlineMs.HasValue) w.Raw(",\"deadline_ms\":" + l.DeadlineMs.Value.ToString(inv));
            }
        }
    }

    /// <summary>A session's WebSocket stream: each SendAsync is one Update and awaits its answer.</summary>
    public sealed class SessionStream : IDisposable
    {
        readonly ClientWebSocket ws;
        readonly TimeSpan timeout;
        readonly SemaphoreSlim one = new SemaphoreSlim(1, 1);
        const int MaxMessage = 64 << 20;

        SessionStream(ClientWebSocket ws, TimeSpan timeout) { this.ws = ws; this.timeout = timeout; }

        internal static async Task<SessionStream> ConnectAsync(PathdClient c, Uri uri, CancellationToken ct)
        {
            for (int tries = 0; ; tries++)
            {
                var ws = new ClientWebSocket();
                if (!string.IsNullOrEmpty(c.Token)) ws.Options.SetRequestHeader("Authorization", "Bearer " + c.Token);
                using (var cts = CancellationTokenSource.CreateLinkedTokenSource(ct))
                {
                    cts.CancelAfter(c.Timeout);
                    try
                    {
                        await ws.ConnectAsync(uri, cts.Token).ConfigureAwait(false);
                        return new SessionStream(ws, c.Timeout);
                    }
                    catch (Exception e) when (e is WebSocketException || e is OperationCanceledException)
                    {
                        ws.Dispose();
                        if (ct.IsCancellationRequested) throw;
                        if (e is OperationCanceledException)
                            throw new PathdTimeoutException("WebSocket handshake: no answer within " + c.Timeout.TotalMilliseconds + " ms", e);
                    }
                }
                // ClientWebSocket hides a refused handshake's status and body
                // (.NET Standard 2.0 has no ClientWebSocket.HttpStatusCode), so
                // the same handshake is sent again by hand to read them. If that
                // one is accepted (the refusal's cause went away), it is closed
                // and the connection tried once more.
                var refusal = await Probe(uri, c.Token, c.Timeout).ConfigureAwait(false);
                if (refusal != null || tries >= 1) throw refusal ?? new PathdProtocolException("WebSocket handshake failed twice");
            }
        }

        /// <summary>The refusal of a handshake as an exception, or null when it was accepted.</summary>
        static async Task<PathdException> Probe(Uri uri, string token, TimeSpan timeout)
        {
            int ms = (int)Math.Min(int.MaxValue, timeout.TotalMilliseconds);
            using (var tcp = new TcpClient())
            {
                var connect = tcp.ConnectAsync(uri.Host, uri.Port);
                if (await Task.WhenAny(connect, Task.Delay(timeout)).ConfigureAwait(false) != connect)
                    return new PathdTimeoutException("WebSocket handshake: no connection within " + ms + " ms");
                try { await connect.ConfigureAwait(false); }
                catch (SocketException e) { return new PathdTransportException("WebSocket connect: " + e.Message, e); }
                Stream s = tcp.GetStream();
                try
                {
                    if (uri.Scheme == "wss")
                    {
                        var ssl = new SslStream(s);
                        await ssl.AuthenticateAsClientAsync(uri.Host).ConfigureAwait(false);
                        s = ssl;
                    }
                    s.ReadTimeout = ms;
                    s.WriteTimeout = ms;
                    var key = new byte[16];
                    using (var rng = RandomNumberGenerator.Create()) rng.GetBytes(key);
                    var head = "GET " + uri.PathAndQuery + " HTTP/1.1\r\nHost: " + uri.Authority +
                               "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" +
                               "Sec-WebSocket-Key: " + Convert.ToBase64String(key) + "\r\n" +
                               (string.IsNullOrEmpty(token) ? "" : "Authorization: Bearer " + token + "\r\n") + "\r\n";
                    var req = Encoding.ASCII.GetBytes(head);
                    s.Write(req, 0, req.Length);
                    var got = new MemoryStream();
                    var buf = new byte[4096];
                    int end = -1;
                    while (end < 0)
                    {
                        int n = s.Read(buf, 0, buf.Length);
                        if (n <= 0) return new PathdTransportException("WebSocket handshake: the connection closed");
                        got.Write(buf, 0, n);
                        end = IndexOf(got.ToArray(), "\r\n\r\n");
                        if (end < 0 && got.Length > 65536) return new PathdProtocolException("a handshake answer head over 64 KiB");
                    }
                    var all = got.ToArray();
                    var lines = Encoding.ASCII.GetString(all, 0, end).Split(new[] { "\r\n" }, StringSplitOptions.None);
                    var parts = lines[0].Split(' ');
                    int status;
                    if (parts.Length < 2 || !int.TryParse(parts[1], NumberStyles.Integer, CultureInfo.InvariantCulture, out status))
                        return new PathdProtocolException("WebSocket handshake: no status line");
                    if (status == 101) return null;
                    int length = 0;
                    TimeSpan? retry = null;
                    foreach (var l in lines)
                    {
                        int colon = l.IndexOf(':');
                        if (colon < 0) continue;
                        var name = l.Substring(0, colon).Trim().ToLowerInvariant();
                        var value = l.Substring(colon + 1).Trim();
                        int v;
                        if (!int.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out v)) continue;
                        if (name == "content-length") length = Math.Min(v, 1 << 20);
                        if (name == "retry-after") retry = TimeSpan.FromSeconds(v);
                    }
                    var body = new MemoryStream();
                    body.Write(all, end + 4, all.Length - end - 4);
                    while (body.Length < length)
                    {
                        int n = s.Read(buf, 0, buf.Length);
                        if (n <= 0) break;
                        body.Write(buf, 0, n);
                    }
                    return PathdClient.ApiError(status, Encoding.UTF8.GetString(body.ToArray(), 0, (int)Math.Min(body.Length, length)), retry);
                }
                catch (IOException e)
                {
                    return new PathdTransportException("WebSocket handshake: " + e.Message, e);
                }
                finally
                {
                    s.Dispose();
                }
            }
        }

        static int IndexOf(byte[] hay, string needle)
        {
            for (int i = 0; i + needle.Length <= hay.Length; i++)
            {
                int k = 0;
                while (k < needle.Length && hay[i + k] == needle[k]) k++;
                if (k == needle.Length) return i;
            }
            return -1;
        }

        /// <summary>Sends one Update and answers its SessionAnswer. An error the server sends on the
        /// stream throws PathdApiException (Status 0) and the stream goes on.</summary>
        public async Task<SessionAnswer> SendAsync(Update update, CancellationToken ct = default(CancellationToken))
        {
            var w = new Json.Writer();
            PathdClient.Write.Update(w, update);
            return PathdClient.Read.Session(await Exchange(w.ToString(), ct).ConfigureAwait(false));
        }

        /// <summary>SendAsync on a graph session's stream: one GraphUpdate, its GraphSessionAnswer.</summary>
        public async Task<GraphSessionAnswer> SendGraphAsync(GraphUpdate update, CancellationToken ct = default(CancellationToken))
        {
            var w = new Json.Writer();
            PathdClient.Write.GraphUpdate(w, update);
            return PathdClient.Read.GraphSession(await Exchange(w.ToString(), ct).ConfigureAwait(false));
        }

        /// <summary>One message out, its answer back as an object (an error answer thrown).</summary>
        async Task<Json.Object> Exchange(string message, CancellationToken ct)
        {
            await one.WaitAsync(ct).ConfigureAwait(false);
            try
            {
                var bytes = Encoding.UTF8.GetBytes(message);
                using (var cts = CancellationTokenSource.CreateLinkedTokenSource(ct))
                {
                    cts.CancelAfter(timeout);
                    string text;
                    try
                    {
                        await ws.SendAsync(new ArraySegment<byte>(bytes), WebSocketMessageType.Text, true, cts.Token).ConfigureAwait(false);
                        text = await ReceiveText(cts.Token).ConfigureAwait(false);
                    }
                    catch (OperationCanceledException e)
                    {
                        if (ct.IsCancellationRequested) throw;
                        throw new PathdTimeoutException("no stream answer within " + timeout.TotalMilliseconds + " ms", e);
                    }
                    catch (Exception e) when (e is WebSocketException || e is IOException)
                    {
                        // 1006 when the connection went before its close frame
                        // was read (a send after the server closed meets a reset,
                        // which drops the unread close frame).
                        throw new PathdStreamClosedException(ws.CloseStatus.HasValue ? (int)ws.CloseStatus.Value : 1006,
                                                             "the stream closed: " + e.Message);
                    }
                    object v;
                    try { v = Json.Parse(text); }
                    catch (FormatException e) { throw new PathdProtocolException("a stream message that is not JSON", e); }
                    var o = Json.Obj(v, "a stream message");
                    var err = Json.Obj(o.Get("error"), null);
                    if (err != null)
                        throw new PathdApiException(0, err.Get("code") as string, err.Get("message") as string, err.Get("field") as string, null);
                    return o;
                }
            }
            finally
            {
                one.Release();
            }
        }

        async Task<string> ReceiveText(CancellationToken ct)
        {
            var buf = new byte[16384];
            var msg = new MemoryStream();
            for (;;)
            {
                var r = await ws.ReceiveAsync(new ArraySegment<byte>(buf), ct).ConfigureAwait(false);
                if (r.MessageType == WebSocketMessageType.Close)
                {
                    int code = r.CloseStatus.HasValue ? (int)r.CloseStatus.Value : 1005;
                    try { await ws.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "", CancellationToken.None).ConfigureAwait(false); }
                    catch (WebSocketException) { }
                    throw new PathdStreamClosedException(code, "the server closed the stream (" + code + ")");
                }
                if (r.MessageType == WebSocketMessageType.Binary) throw new PathdProtocolException("a binary message on a session stream");
                msg.Write(buf, 0, r.Count);
                if (msg.Length > MaxMessage) throw new PathdProtocolException("a stream message over " + MaxMessage + " bytes");
                if (r.EndOfMessage) return Encoding.UTF8.GetString(msg.ToArray());
            }
        }

        /// <summary>Closes with 1000 and waits (up to the timeout) for the server's close.</summary>
        public async Task CloseAsync()
        {
            if (ws.State == WebSocketState.Open || ws.State == WebSocketState.CloseReceived)
            {
                using (var cts = new CancellationTokenSource(timeout))
                {
                    try { await ws.CloseAsync(WebSocketCloseStatus.NormalClosure, "", cts.Token).ConfigureAwait(false); }
                    catch (Exception e) when (e is WebSocketException || e is OperationCanceledException) { }
                }
            }
            ws.Dispose();
        }

        public void Dispose() { ws.Dispose(); }
    }

    // ---- JSON ----

    /// <summary>A strict JSON reader (objects as Json.Object, arrays as List&lt;object&gt;, numbers as
    /// double, strings, bools, null) and a writer, culture-invariant.</summary>
    public static class Json
    {
        public sealed class Object
        {
            public readonly Dictionary<string, object> Members = new Dictionary<string, object>();
            public object Get(string key) { object v; return Members.TryGetValue(key, out v) ? v : null; }
        }

        /// <summary>v as an object; null (when what is null) or a PathdProtocolException otherwise.</summary>
        public static Object Obj(object v, string what)
        {
            var o = v as Object;
            if (o == null && what != null) throw new PathdProtocolException(what + " is not a JSON object");
            return o;
        }

        public static List<object> Arr(object v, string what)
        {
            var a = v as List<object>;
            if (a == null) throw new PathdProtocolException(what + " is not a JSON array");
            return a;
        }

        const int MaxDepth = 128;

        /// <summary>Parses exactly one JSON value; FormatException otherwise.</summary>
        public static object Parse(string s)
        {
            int i = 0;
            var v = Value(s, ref i, 0);
            Ws(s, ref i);
            if (i != s.Length) throw new FormatException("JSON: trailing characters at " + i);
            return v;
        }

        static void Ws(string s, ref int i)
        {
            while (i < s.Length && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
        }

        static object Value(string s, ref int i, int depth)
        {
            if (depth > MaxDepth) throw new FormatException("JSON: nested too deep");
            Ws(s, ref i);
            if (i >= s.Length) throw new FormatException("JSON: unexpected end");
            char c = s[i];
            if (c == '{')
            {
                var o = new Object();
                i++;
                Ws(s, ref i);
                if (i < s.Length && s[i] == '}') { i++; return o; }
                for (;;)
                {
                    Ws(s, ref i);
                    if (i >= s.Length || s[i] != '"') throw new FormatException("JSON: a member name expected at " + i);
                    var key = Str(s, ref i);
                    Ws(s, ref i);
                    if (i >= s.Length || s[i] != ':') throw new FormatException("JSON: ':' expected at " + i);
                    i++;
                    o.Members[key] = Value(s, ref i, depth + 1);
                    Ws(s, ref i);
                    if (i < s.Length && s[i] == ',') { i++; continue; }
                    if (i < s.Length && s[i] == '}') { i++; return o; }
                    throw new FormatException("JSON: ',' or '}' expected at " + i);
                }
            }
            if (c == '[')
            {
                var a = new List<object>();
                i++;
                Ws(s, ref i);
                if (i < s.Length && s[i] == ']') { i++; return a; }
                for (;;)
                {
                    a.Add(Value(s, ref i, depth + 1));
                    Ws(s, ref i);
                    if (i < s.Length && s[i] == ',') { i++; continue; }
                    if (i < s.Length && s[i] == ']') { i++; return a; }
                    throw new FormatException("JSON: ',' or ']' expected at " + i);
                }
            }
            if (c == '"') return Str(s, ref i);
            if (Lit(s, ref i, "true")) return true;
            if (Lit(s, ref i, "false")) return false;
            if (Lit(s, ref i, "null")) return null;
            return Num(s, ref i);
        }

        static bool Lit(string s, ref int i, string lit)
        {
            if (string.CompareOrdinal(s, i, lit, 0, lit.Length) != 0) return false;
            i += lit.Length;
            return true;
        }

        static readonly Regex NumRe = new Regex(@"\G-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?");

        static double Num(string s, ref int i)
        {
            var m = NumRe.Match(s, i);
            if (!m.Success || m.Length == 0) throw new FormatException("JSON: a value expected at " + i);
            i += m.Length;
            return double.Parse(m.Value, NumberStyles.Float, CultureInfo.InvariantCulture);
        }

        static string Str(string s, ref int i)
        {
            var sb = new StringBuilder();
            i++;
            while (i < s.Length && s[i] != '"')
            {
                char c = s[i++];
                if (c < 0x20) throw new FormatException("JSON: a control character in a string");
                if (c != '\\') { sb.Append(c); continue; }
                if (i >= s.Length) break;
                char e = s[i++];
                switch (e)
                {
                    case '"': sb.Append('"'); break;
                    case '\\': sb.Append('\\'); break;
                    case '/': sb.Append('/'); break;
                    case 'b': sb.Append('\b'); break;
                    case 'f': sb.Append('\f'); break;
                    case 'n': sb.Append('\n'); break;
                    case 'r': sb.Append('\r'); break;
                    case 't': sb.Append('\t'); break;
                    case 'u':
                        if (i + 4 > s.Length) throw new FormatException("JSON: a short \\u escape");
                        sb.Append((char)int.Parse(s.Substring(i, 4), NumberStyles.HexNumber, CultureInfo.InvariantCulture));
                        i += 4;
                        break;
                    default: throw new FormatException("JSON: a bad escape");
                }
            }
            if (i >= s.Length) throw new FormatException("JSON: an unterminated string");
            i++;
            return sb.ToString();
        }

        public sealed class Writer
        {
            readonly StringBuilder sb = new StringBuilder();
            public void Raw(string s) { sb.Append(s); }
            public void Point(Point p)
            {
                sb.Append('[').Append(p.X.ToString(CultureInfo.InvariantCulture)).Append(',')
                  .Append(p.Y.ToString(CultureInfo.InvariantCulture)).Append(']');
            }
            public void String(string s)
            {
                sb.Append('"');
                foreach (char c in s)
                {
                    if (c == '"' || c == '\\') sb.Append('\\').Append(c);
                    else if (c < 0x20) sb.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                    else sb.Append(c);
                }
                sb.Append('"');
            }
            public override string ToString() { return sb.ToString(); }
        }
    }
}
