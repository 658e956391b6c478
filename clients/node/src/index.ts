// pathd-client: a thin, typed Node client for the pathd v1 HTTP API.
//
// Each method is one operation of proto/openapi.yaml (its operationId is in
// the comment), takes and returns the API's own JSON shapes (field names as
// on the wire: map_version, ttl_s, ...), and throws typed errors:
//
//   ApiError          the server answered an error body (status, code, field,
//                     retryAfterS): 404 map_not_found, 422 off_map, ...
//   TimeoutError      no answer within timeoutMs
//   TransportError    could not connect, connection reset, ...
//   ProtocolError     an answer that is not what the API promises
//   StreamClosedError a session stream closed (code 1001: the server stops)
//
// An unreachable goal is not an error: found is false, as in the API.
//
// Timeouts and retries: each attempt is bounded by timeoutMs; a 503 whose
// code says the server did nothing (queue full, session or stream limits,
// shutting down, the shared store out of reach) is retried up to maxRetries
// times after its Retry-After (capped by maxRetryWaitMs); a read is also
// retried on any other 503. No other answer is retried.
//
// Changes whose outcome is unknown: a change (putMap, createMap, patchMap,
// deleteMap) answered 503 store_outcome_unknown (a fleet's Redis did not
// confirm it in time), 502 or 504 (a proxy lost the answer), a 503 that is
// not pathd's, or sent and never answered, may have been made. It is
// retried (up to maxRetries) only where a retry cannot make it twice: with
// If-Match set to the ETag the change was based on (the caller's
// WriteOptions, else the last ETag this client saw for the map from its own
// uploads, GETs and PATCHes), else If-None-Match: * for a PUT, a DELETE as
// it was (404 then means done), a POST as it was (the same bytes find the
// same map). A 2xx then means made, once. A 412 on the retry, a PATCH with
// no ETag known, or retries used up throw ApiError with code
// 'store_outcome_unknown': read the map (when the last attempt got no answer
// at all, its TimeoutError or TransportError is thrown, which on a change
// says the same).
//
// Tokens: `token` is sent as `Authorization: Bearer` (issue 13's read/write
// scopes; this server build does not check them yet).

import WebSocket from 'ws';

// ---- the API's shapes (proto/openapi.yaml, components.schemas) ----

export type Point = [number, number];

export type Algorithm = 'bfs' | 'dijkstra' | 'astar' | 'weighted' | 'greedy' | 'jps' | 'hpa' | 'subgoal' | 'auto';
export type Heuristic = 'default' | 'octile' | 'manhattan' | 'chebyshev' | 'euclidean';

export type ErrorCode =
    | 'malformed_json' | 'invalid_request' | 'malformed_map' | 'invalid_map_id' | 'map_not_found'
    | 'not_found' | 'method_not_allowed' | 'body_too_large' | 'limit_exceeded'
    | 'unsupported_media_type' | 'invalid_value' | 'off_map' | 'blocked' | 'unsupported'
    | 'overloaded' | 'shutting_down' | 'deadline_exceeded' | 'out_of_memory' | 'internal'
    | 'session_not_found' | 'session_busy' | 'too_many_sessions' | 'upgrade_required'
    | 'conflict' | 'storage_failed' | 'precondition_failed' | 'store_unavailable'
    | 'store_outcome_unknown' | 'store_not_durable' | 'not_ready';

export interface ErrorObject {
    code: ErrorCode;
    message: string;
    field?: string;
}

/** Path options (PathRequest without start and goal). */
export interface PathOptions {
    algorithm?: Algorithm;
    weight?: number;
    heuristic?: Heuristic;
    smooth?: boolean;
    debug?: boolean;
    deadline_ms?: number;
    max_expanded?: number;
    cache?: boolean;
}

export interface PathRequest extends PathOptions {
    start: Point;
    goal: Point;
}

export interface PathAnswer {
    found: boolean;
    cost?: number;
    reason?: 'unreachable' | 'node_budget';
    path: Point[];
    algorithm: Algorithm;
    map_version: number;
    stats: { expanded: number; time_us: number; cached: boolean };
    expanded_cells?: Point[];
}

/** A batch slot of a query that failed on its own. */
export interface BatchError {
    status: number;
    error: ErrorObject;
}

export interface BatchAnswer {
    results: Array<PathAnswer | BatchError>;
    map_version: number;
}

export function isBatchError(slot: PathAnswer | BatchError): slot is BatchError {
    return (slot as BatchError).error !== undefined;
}

export type Wall = [number, number, 'E' | 'W' | 'S' | 'N'];

export interface DoorJson {
    cells?: Point[];
    walls?: Wall[];
    open?: boolean;
    costs?: number[];
}

/** A JSON map: `rows` (+ legend), or `costs` + width + height (MapCells). */
export interface MapJson {
    width?: number;
    height?: number;
    rows?: string[];
    costs?: string;
    legend?: Record<string, number>;
    connectivity?: 4 | 8;
    corner_cutting?: boolean;
    walls?: Wall[];
    doors?: Record<string, DoorJson>;
    id?: string;
    version?: number;
}

/** GET /v1/maps/{id}/cells: uploads back as it is with putMap. */
export interface MapCells {
    id: string;
    version: number;
    width: number;
    height: number;
    connectivity: 4 | 8;
    corner_cutting: boolean;
    costs: string;
    walls: Wall[];
    doors: Record<string, { open: boolean; cells: Point[]; walls: Wall[]; costs: number[] }>;
}

export interface MapInfo {
    id: string;
    version: number;
    width: number;
    height: number;
    connectivity: number;
    corner_cutting: boolean;
    walkable_cells: number;
    uniform_cost: boolean;
    doors: number;
    memory_bytes: number;
    jps_landmarks: number;
    build_us: number;
    default_algorithm: string;
    hierarchy: { build_us: number } | null;
    cache: { entries: number; hits: number; misses: number; hit_ratio: number };
    /** The answer's ETag header ("\"3-7\""): its version and lineage. */
    etag?: string;
}

/** A change's preconditions (RFC 9110); 412 precondition_failed when they
 * do not hold, and nothing changed. */
export interface WriteOptions {
    /** An ETag as answered, or '*' (the map exists). */
    ifMatch?: string;
    /** '*': a PUT that only creates. */
    ifNoneMatch?: '*';
}

/** An upload's answer: the map info, and whether it was new (201). */
export interface UploadAnswer extends MapInfo {
    created: boolean;
}

export interface CellChange {
    x: number;
    y: number;
    cost?: number;
    blocked?: boolean;
}

export interface DoorSwitch {
    id: string;
    open: boolean;
}

export interface MapPatch {
    cells?: CellChange[];
    doors?: DoorSwitch[];
}

export interface SessionRequest {
    start: Point;
    goal: Point;
    ttl_s?: number;
    /** The session's replanning policy; members not sent take the server's defaults. */
    replan?: ReplanPolicy;
    /** Expansions one plan (the first and every repair) may do; a plan that
     * reaches it answers found false, reason node_budget, and the next
     * request goes on with it. */
    max_expanded?: number;
    /** Ms one plan may run (at most the server's max_deadline_ms); past it:
     * found false, reason deadline, and the next request goes on. */
    deadline_ms?: number;
}

export interface Update {
    position?: Point;
    goal?: Point;
    cells?: CellChange[];
    doors?: DoorSwitch[];
    /** A new replanning policy from this update on (members not sent are kept). */
    replan?: ReplanPolicy;
}

/** When a session plans again (proto/openapi.yaml's ReplanPolicy). */
export interface ReplanPolicy {
    min_interval_ms?: number;
    min_updates?: number;
    goal_threshold?: number;
    hysteresis?: number;
}

export interface SessionAnswer {
    session_id: string;
    map_id: string;
    found: boolean;
    cost?: number;
    reason?: 'unreachable' | 'blocked' | 'node_budget' | 'deadline';
    /** Absent in a stream's short answer (`unchanged`): the last whole answer's path from `position` on. */
    path: Point[];
    position: Point;
    goal: Point;
    algorithm: 'dstar';
    /** A stream's short answer: the route did not change since the last whole answer on this stream (no path sent). */
    unchanged?: true;
    /** Why this request replanned or did not, and the session's replanning policy. */
    replan?: {
        reason: 'initial' | 'blocked' | 'off_route' | 'route_end' | 'goal_moved' | 'map_changed' | 'unchanged' | 'interval' | 'threshold' | 'target_adjusted';
        replanned: boolean;
        route: 'none' | 'new' | 'same' | 'updated' | 'switched' | 'kept' | 'lost' | 'adjusted';
        flip: boolean;
        policy: ReplanPolicy;
    };
    map_version: number;
    ttl_s: number;
    stats: {
        expanded: number;
        time_us: number;
        updates: number;
        rebase: 'none' | 'incremental' | 'rebuilt';
        memory_bytes: number;
    };
}

// ---- waypoint graphs (kind "graph"; docs/graphs.md) ----

/** A graph node's id: a string of 1..64 bytes or an integer (17 and "17" are one id). */
export type NodeId = string | number;
/** [x, y] or [x, y, z], the same for every node of one graph. */
export type GraphPosition = [number, number] | [number, number, number];

export interface GraphNode {
    id: NodeId;
    position: GraphPosition;
    tags?: string[];
    /** false: uploaded disabled (a PATCH enables it). */
    enabled?: boolean;
}

export interface GraphEdge {
    from: NodeId;
    to: NodeId;
    /** Without it: the straight-line length times `factor` (or the upload's cost_factor). */
    cost?: number;
    factor?: number;
    /** true: only from -> to. */
    oneway?: boolean;
    /** A PATCH may name the edge by it (else by its index in `edges`). */
    id?: string;
    tags?: string[];
    enabled?: boolean;
}

/** GraphUpload: nodes and edges, or the 9th DIMACS challenge's .gr/.co text (see dimacsGraph). */
export interface GraphUpload {
    kind: 'graph';
    nodes?: GraphNode[];
    edges?: GraphEdge[];
    cost_factor?: number;
    dimacs?: { gr: string; co: string };
    /** Door groups, opened and closed by name with patchGraph({doors}) (graphops28's server; main's refuses the field). */
    doors?: GraphDoor[];
}

/** A door group: edges (by index or id) and nodes switched together by name. */
export interface GraphDoor {
    name: string;
    edges?: Array<number | string>;
    nodes?: NodeId[];
    /** false: uploaded closed (its members disabled). */
    open?: boolean;
}

/** A DIMACS upload as the server takes it: the .gr arcs (one-way) and .co coordinates, as they are. */
export function dimacsGraph(gr: string, co: string): GraphUpload {
    return { kind: 'graph', dimacs: { gr, co } };
}

/** A node by id, or a point snapped to the nearest enabled node (or edge, with snap: 'edge'). */
export type GraphPlace = NodeId | { point: GraphPosition };

export type GraphAlgorithm = 'auto' | 'astar' | 'alt' | 'dijkstra';

/** GraphPathRequest without start and goal. */
export interface GraphPathOptions {
    algorithm?: GraphAlgorithm;
    max_expanded?: number;
    /** The path to the closed node nearest the goal when the goal is not reached. */
    partial?: boolean;
    cache?: boolean;
    deadline_ms?: number;
    /** Edges and nodes carrying any of these tags are not walked (at most 8). */
    exclude_tags?: string[];
    snap?: 'node' | 'edge';
}

/** GraphPathRequest: `goal`, or `goals` (the cheapest of them; the answer's goal_index). */
export interface GraphPathRequest extends GraphPathOptions {
    start: GraphPlace;
    goal?: GraphPlace;
    goals?: GraphPlace[];
}

/** Where a path starts or ends: the node, and for a point how it snapped. */
export interface GraphEnd {
    node?: NodeId;
    snapped: boolean;
    distance?: number;
    /** snap 'edge': the edge, the fraction along it from its from node, the point on it. */
    edge?: number;
    at?: number;
    point?: number[];
}

export interface GraphPathAnswer {
    found: boolean;
    goal_index?: number;
    partial?: boolean;
    reason?: 'unreachable' | 'budget';
    cost?: number;
    /** Node ids from the start, as uploaded. */
    path: NodeId[];
    /** Edge indices: edges[i] joins path[i] and path[i + 1]. */
    edges: number[];
    points: number[][];
    start: GraphEnd;
    goal?: GraphEnd;
    algorithm: 'astar' | 'dijkstra' | 'alt';
    map_version: number;
    stats: { expanded: number; time_us: number; cached: boolean };
}

export interface GraphBatchAnswer {
    results: Array<GraphPathAnswer | BatchError>;
    map_version: number;
}

/** GraphPatch: applied together as the next version. */
export interface GraphPatch {
    /** Door groups opened or closed by name, applied before nodes and edges. */
    doors?: Array<{ name: string; open: boolean }>;
    nodes?: Array<{ id: NodeId; enabled: boolean }>;
    /** An edge by its index in the upload, or by its id. */
    edges?: Array<{ index?: number; id?: string; enabled?: boolean; cost?: number }>;
}

/** GET /v1/maps/{id}/graph: the version as an upload would hold it (node i and edge i at index i). */
export interface GraphExport {
    map: string;
    version: number;
    dimensions: 2 | 3;
    kind: 'graph';
    nodes: GraphNode[];
    edges: Array<GraphEdge & { cost: number }>;
    /** The answer's ETag header. */
    etag?: string;
}

export interface GraphTableRequest {
    sources: GraphPlace[];
    /** Default: the sources. */
    targets?: GraphPlace[];
    paths?: boolean;
    deadline_ms?: number;
}

export interface GraphTableAnswer {
    /** costs[i][j], source i to target j; null without a path. */
    costs: Array<Array<number | null>>;
    paths?: Array<Array<NodeId[] | null>>;
    sources: GraphEnd[];
    targets: GraphEnd[];
    algorithm: 'dijkstra';
    map_version: number;
    stats: { searches: number; expanded: number; unreachable: number; time_us: number };
}

/** A graph session's place: a node id, or a point ([x, y, z]; [x, y] integers on a 2D graph) snapped to the nearest enabled node. */
export type GraphSessionPlace = NodeId | GraphPosition;

export interface GraphSessionRequest {
    start: GraphSessionPlace;
    goal: GraphSessionPlace;
    ttl_s?: number;
    replan?: ReplanPolicy;
    /** Expansions one plan (the first and every repair) may do; a plan that
     * reaches it answers found false, reason node_budget, and the next
     * request goes on with it. */
    max_expanded?: number;
    /** Ms one plan may run (at most the server's max_deadline_ms); past it:
     * found false, reason deadline, and the next request goes on. */
    deadline_ms?: number;
}

/** A graph session's update: nodes and edges change for everyone with patchGraph. */
export interface GraphUpdate {
    position?: GraphSessionPlace;
    goal?: GraphSessionPlace;
    replan?: ReplanPolicy;
}

export interface GraphSessionAnswer {
    session_id: string;
    map_id: string;
    found: boolean;
    reason?: 'unreachable' | 'node_budget' | 'deadline' | 'blocked';
    cost: number;
    /** Absent in a stream's short answer (`unchanged`). */
    path: NodeId[];
    edges: number[];
    points: number[][];
    position: NodeId;
    goal: NodeId;
    algorithm: 'dstar_lite';
    unchanged?: true;
    replan?: SessionAnswer['replan'];
    map_version: number;
    ttl_s: number;
    stats: { expanded: number; time_us: number; updates: number; rebase: 'none' | 'incremental'; memory_bytes: number };
}

/** MapInfo of a graph map (kind 'graph'). */
export interface GraphMapInfo extends UploadAnswer {
    kind: 'graph';
    graph: {
        nodes: number;
        edges: number;
        arcs: number;
        dimensions: 2 | 3;
        max_degree: number;
        disabled_nodes: number;
        disabled_edges: number;
        heuristic_ratio: number;
        landmarks?: number;
        landmark_scale?: number;
        components?: number;
        /** The door groups declared at upload (absent when none). */
        doors?: Array<{ name: string; open: boolean; edges: number; nodes: number }>;
    };
}

// ---- errors ----

/** The base of every error this client throws. */
export class PathdError extends Error {
    /** HTTP attempts made (retries + 1); 0 when none was sent. */
    attempts = 0;
    constructor(message: string) {
        super(message);
        this.name = new.target.name;
    }
}

/** The server answered an error body. */
export class ApiError extends PathdError {
    constructor(
        readonly status: number,
        readonly code: ErrorCode,
        message: string,
        readonly field?: string,
        readonly retryAfterS?: number,
    ) {
        super(message);
    }
}

export class TimeoutError extends PathdError {}
export class TransportError extends PathdError {
    /** The system error code behind it ('ECONNREFUSED', 'ECONNRESET', ...). */
    constructor(message: string, readonly syscode?: string) {
        super(message);
    }
}
export class ProtocolError extends PathdError {}
export class StreamClosedError extends PathdError {
    constructor(readonly code: number, message: string) {
        super(message);
    }
}

// ---- the client ----

export interface ClientOptions {
    /** "http://127.0.0.1:8080"; a path prefix is kept ("https://lb/pathd"). */
    baseUrl: string;
    /** Sent as Authorization: Bearer. */
    token?: string;
    /** Per attempt, in ms (default 10000). */
    timeoutMs?: number;
    /** Retries of a 503 (default 2; 0 = none). */
    maxRetries?: number;
    /** Cap on one Retry-After wait, in ms (default 10000). */
    maxRetryWaitMs?: number;
}

/** What request() answers, whatever the status. */
export interface Answer {
    status: number;
    headers: Headers;
    text: string;
    /** HTTP attempts made (retries + 1). */
    attempts: number;
}

const MAP_ID = /^[A-Za-z0-9_.-]{1,64}$/;
/** Maps whose last ETag a client remembers. */
const ETAGS_KEPT = 1024;
/** 503 codes of a change that say nothing was done: retried as it was. */
const NOTHING_DONE = new Set(['overloaded', 'shutting_down', 'out_of_memory', 'not_ready', 'store_unavailable']);
const SESSION_ID = /^[A-Za-z0-9_-]{1,64}$/;

function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

function retryAfter(h: Headers | Record<string, string | string[] | undefined>): number | undefined {
    const v = h instanceof Headers ? h.get('retry-after') : (h['retry-after'] as string | undefined);
    if (v === null || v === undefined || !/^\s*\d+\s*$/.test(v)) return undefined;
    return Number(v);
}

function errorCode(text: string): string | undefined {
    try {
        const e = (JSON.parse(text) as { error?: ErrorObject }).error;
        return e && typeof e.code === 'string' ? e.code : undefined;
    } catch {
        return undefined;
    }
}

function apiError(status: number, text: string, retry?: number): PathdError {
    let body: unknown;
    try {
        body = JSON.parse(text);
    } catch {
        return new ProtocolError(`HTTP ${status} with a body that is not JSON`);
    }
    const e = (body as { error?: ErrorObject }).error;
    if (!e || typeof e.code !== 'string') return new ProtocolError(`HTTP ${status} without an API error body`);
    return new ApiError(status, e.code, e.message, e.field, retry);
}

export class Client {
    readonly baseUrl: string;
    private readonly token?: string;
    private readonly timeoutMs: number;
    private readonly maxRetries: number;
    private readonly maxRetryWaitMs: number;
    /** The last ETag seen of each map (insertion order: oldest first). */
    private readonly etags = new Map<string, string>();

    constructor(opts: ClientOptions) {
        if (!opts || !opts.baseUrl) throw new TypeError('baseUrl is required');
        this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
        this.token = opts.token;
        this.timeoutMs = opts.timeoutMs ?? 10000;
        this.maxRetries = opts.maxRetries ?? 2;
        this.maxRetryWaitMs = opts.maxRetryWaitMs ?? 10000;
    }

    /** One request, retried on 503; any status is returned, not thrown. */
    request(method: string, path: string, body?: string, contentType?: string): Promise<Answer> {
        return this.send(method, path, body, contentType, {}, false);
    }

    /** request() with extra headers; a change's 503 is retried only when
     * its code says nothing was done. */
    private async send(method: string, path: string, body: string | undefined, contentType: string | undefined, extra: Record<string, string>, change: boolean): Promise<Answer> {
        const headers: Record<string, string> = { Accept: 'application/json', ...extra };
        if (contentType) headers['Content-Type'] = contentType;
        if (this.token) headers.Authorization = `Bearer ${this.token}`;
        for (let attempt = 0; ; attempt++) {
            let res: Response;
            let text: string;
            try {
                res = await fetch(this.baseUrl + path, {
                    method,
                    headers,
                    body,
                    signal: AbortSignal.timeout(this.timeoutMs),
                });
                text = await res.text();
            } catch (err) {
                const e = err as Error & { cause?: Error & { code?: string } };
                const out =
                    e.name === 'TimeoutError' || e.name === 'AbortError'
                        ? new TimeoutError(`${method} ${path}: no answer within ${this.timeoutMs} ms`)
                        : new TransportError(`${method} ${path}: ${e.cause ? e.cause.message : e.message}`, e.cause?.code);
                out.attempts = attempt + 1;
                throw out;
            }
            if (res.status === 503 && attempt < this.maxRetries && (!change || NOTHING_DONE.has(errorCode(text) ?? ''))) {
                const ra = retryAfter(res.headers);
                await sleep(Math.min(ra !== undefined ? ra * 1000 : 1000, this.maxRetryWaitMs));
                continue;
            }
            return { status: res.status, headers: res.headers, text, attempts: attempt + 1 };
        }
    }

    /** A call whose success is one of `ok`, answering JSON (or nothing for 204). */
    private async call<T>(method: string, path: string, ok: number[], body?: unknown, contentType?: string): Promise<{ value: T; status: number; headers: Headers }> {
        const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
        const a = await this.request(method, path, payload, payload === undefined ? undefined : contentType ?? 'application/json');
        if (!ok.includes(a.status)) {
            const e = apiError(a.status, a.text, retryAfter(a.headers));
            e.attempts = a.attempts;
            throw e;
        }
        if (a.status === 204 || a.text === '') return { value: undefined as T, status: a.status, headers: a.headers };
        try {
            return { value: JSON.parse(a.text) as T, status: a.status, headers: a.headers };
        } catch {
            const e = new ProtocolError(`${method} ${path}: HTTP ${a.status} with a body that is not JSON`);
            e.attempts = a.attempts;
            throw e;
        }
    }

    private remember(id: string, etag: string | null | undefined): void {
        this.etags.delete(id);
        if (!etag) return;
        this.etags.set(id, etag);
        if (this.etags.size > ETAGS_KEPT) this.etags.delete(this.etags.keys().next().value as string);
    }

    /** A change (id undefined for POST /v1/maps), retried when its outcome
     * is unknown as the file comment says. */
    private async change<T>(method: string, path: string, id: string | undefined, ok: number[], body: string | undefined, contentType: string | undefined, opts: WriteOptions = {}): Promise<{ value: T; status: number; headers: Headers }> {
        const headers: Record<string, string> = {};
        if (opts.ifMatch) headers['If-Match'] = opts.ifMatch;
        else if (opts.ifNoneMatch) headers['If-None-Match'] = opts.ifNoneMatch;
        const conditional = Object.keys(headers).length > 0;
        let attempts = 0;
        let retried = false;
        for (let attempt = 0; ; attempt++) {
            let a: Answer | undefined;
            let failure: PathdError | undefined;
            try {
                a = await this.send(method, path, body, contentType, headers, true);
                attempts += a.attempts;
            } catch (err) {
                if (!(err instanceof PathdError)) throw err;
                attempts += err.attempts;
                failure = err;
            }
            const unknownWith = (status: number, message: string) => {
                const e = new ApiError(status, 'store_outcome_unknown', message);
                e.attempts = attempts;
                return e;
            };
            if (a && ok.includes(a.status)) {
                if (id !== undefined) this.remember(id, method === 'DELETE' ? undefined : a.headers.get('etag'));
                const value = a.status === 204 || a.text === '' ? (undefined as T) : this.parse<T>(method, path, a);
                return { value, status: a.status, headers: a.headers };
            }
            if (a && retried && method === 'DELETE' && a.status === 404) {
                if (id !== undefined) this.remember(id, undefined);
                return { value: undefined as T, status: 204, headers: a.headers };
            }
            if (a && retried && a.status === 412)
                throw unknownWith(412, `${method} ${path}: the first attempt's outcome was unknown and its retry (${JSON.stringify(headers)}) found the map changed: this change, or another, was made; read the map`);
            const unknown = a
                ? a.status === 502 || a.status === 504 || (a.status === 503 && (errorCode(a.text) ?? 'store_outcome_unknown') === 'store_outcome_unknown')
                : failure instanceof TimeoutError || (failure instanceof TransportError && !['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN'].includes(failure.syscode ?? ''));
            if (!unknown) {
                if (failure) {
                    failure.attempts = attempts;
                    throw failure;
                }
                const e = apiError(a!.status, a!.text, retryAfter(a!.headers));
                e.attempts = attempts;
                throw e;
            }
            const why = a ? `HTTP ${a.status}` : (failure as PathdError).message;
            // No retry left, or none safe: an answer says store_outcome_unknown;
            // a timeout or a lost connection is thrown as it is (which says as much).
            const giveUp = (message: string) => {
                if (failure) {
                    failure.attempts = attempts;
                    return failure;
                }
                return unknownWith(a!.status, message);
            };
            if (attempt >= this.maxRetries) throw giveUp(`${method} ${path}: the outcome is unknown (${why}) and no retry is left: read the map`);
            if (!retried && !conditional && id !== undefined) {
                const tag = this.etags.get(id);
                if (tag) headers['If-Match'] = tag;
                else if (method === 'PUT') headers['If-None-Match'] = '*';
                else if (method === 'PATCH') throw giveUp(`${method} ${path}: the outcome is unknown (${why}), and no ETag of the map is known to retry it safely (pass ifMatch): read the map`);
            }
            retried = true;
            const ra = a ? retryAfter(a.headers) : undefined;
            await sleep(Math.min(ra !== undefined ? ra * 1000 : 1000, this.maxRetryWaitMs));
        }
    }

    private parse<T>(method: string, path: string, a: Answer): T {
        try {
            return JSON.parse(a.text) as T;
        } catch {
            const e = new ProtocolError(`${method} ${path}: HTTP ${a.status} with a body that is not JSON`);
            e.attempts = a.attempts;
            throw e;
        }
    }

    private static mapPath(id: string, tail = ''): string {
        if (typeof id !== 'string' || !MAP_ID.test(id)) throw new TypeError(`map id '${id}' is not [A-Za-z0-9_.-]{1,64}`);
        return `/v1/maps/${id}${tail}`;
    }

    private static sessionPath(mapId: string, sid: string, tail = ''): string {
        if (typeof sid !== 'string' || !SESSION_ID.test(sid)) throw new TypeError(`session id '${sid}' is not [A-Za-z0-9_-]{1,64}`);
        return Client.mapPath(mapId, `/sessions/${sid}${tail}`);
    }

    // ---- maps ----

    private async upload(method: string, path: string, id: string | undefined, map: string | MapJson | MapCells, opts?: WriteOptions): Promise<UploadAnswer> {
        const text = typeof map === 'string';
        const r = await this.change<MapInfo>(method, path, id, [200, 201], text ? map : JSON.stringify(map), text ? 'text/x-movingai-map' : 'application/json', opts);
        const etag = r.headers.get('etag') ?? undefined;
        if (id === undefined && etag) this.remember(r.value.id, etag);
        return { ...r.value, etag, created: r.status === 201 };
    }

    /** putMap: create (created, version 1) or replace (version + 1). A
     * string is a Moving AI .map (text/x-movingai-map); an object is a MapJson. */
    putMap(id: string, map: string | MapJson | MapCells, opts?: WriteOptions): Promise<UploadAnswer> {
        return this.upload('PUT', Client.mapPath(id), id, map, opts);
    }

    /** createMap: POST /v1/maps; the server picks the id from the content. */
    createMap(map: string | MapJson | MapCells): Promise<UploadAnswer> {
        return this.upload('POST', '/v1/maps', undefined, map);
    }

    /** getMap */
    async getMap(id: string): Promise<MapInfo> {
        const r = await this.call<MapInfo>('GET', Client.mapPath(id), [200]);
        const etag = r.headers.get('etag') ?? undefined;
        this.remember(id, etag);
        return { ...r.value, etag };
    }

    /** listMaps: every map held, sorted by id. */
    async listMaps(): Promise<MapInfo[]> {
        return (await this.call<{ maps: MapInfo[] }>('GET', '/v1/maps', [200])).value.maps;
    }

    /** patchMap: cells then doors, as the next version of the world. */
    async patchMap(id: string, patch: MapPatch, opts?: WriteOptions): Promise<MapInfo> {
        const r = await this.change<MapInfo>('PATCH', Client.mapPath(id), id, [200], JSON.stringify(patch), 'application/json', opts);
        return { ...r.value, etag: r.headers.get('etag') ?? undefined };
    }

    /** deleteMap (ends its sessions). */
    async deleteMap(id: string, opts?: WriteOptions): Promise<void> {
        await this.change<void>('DELETE', Client.mapPath(id), id, [204], undefined, undefined, opts);
    }

    /** getMapCells: the export, which putMap accepts back as it is. */
    async getMapCells(id: string): Promise<MapCells> {
        return (await this.call<MapCells>('GET', Client.mapPath(id, '/cells'), [200])).value;
    }

    // ---- paths ----

    /** findPath */
    async findPath(id: string, req: PathRequest): Promise<PathAnswer> {
        return (await this.call<PathAnswer>('POST', Client.mapPath(id, '/path'), [200], req)).value;
    }

    /** findPaths: a batch with one deadline; a query that fails alone gets
     * a BatchError slot (see isBatchError). */
    async findPaths(id: string, queries: PathRequest[], opts: { deadline_ms?: number } = {}): Promise<BatchAnswer> {
        const body: { queries: PathRequest[]; deadline_ms?: number } = { queries };
        if (opts.deadline_ms !== undefined) body.deadline_ms = opts.deadline_ms;
        return (await this.call<BatchAnswer>('POST', Client.mapPath(id, '/paths'), [200], body)).value;
    }

    // ---- sessions ----

    /** createSession: one moving agent, D* Lite. */
    async createSession(mapId: string, req: SessionRequest): Promise<SessionAnswer> {
        return (await this.call<SessionAnswer>('POST', Client.mapPath(mapId, '/sessions'), [201], req)).value;
    }

    /** getSession: the current path, brought to the map's current version. */
    async getSession(mapId: string, sid: string): Promise<SessionAnswer> {
        return (await this.call<SessionAnswer>('GET', Client.sessionPath(mapId, sid), [200])).value;
    }

    /** deleteSession */
    async deleteSession(mapId: string, sid: string): Promise<void> {
        await this.call<void>('DELETE', Client.sessionPath(mapId, sid), [204]);
    }

    /** updateSession: one Update as JSON, or an array as NDJSON (applied in
     * order as one request, all validated first; a bad line's field is
     * "lines[i]...."). Answers the path after the last. */
    async updateSession(mapId: string, sid: string, update: Update | Update[]): Promise<SessionAnswer> {
        const path = Client.sessionPath(mapId, sid, '/updates');
        if (Array.isArray(update)) {
            const nd = update.map((u) => JSON.stringify(u)).join('\n') + '\n';
            return (await this.call<SessionAnswer>('POST', path, [200], nd, 'application/x-ndjson')).value;
        }
        return (await this.call<SessionAnswer>('POST', path, [200], update)).value;
    }

    /** streamSession: a WebSocket; send() answers each Update in order. A
     * refused handshake throws ApiError (a 503 is retried). */
    async openStream(mapId: string, sid: string): Promise<SessionStream> {
        const url = this.baseUrl.replace(/^http/, 'ws') + Client.sessionPath(mapId, sid, '/stream');
        for (let attempt = 0; ; attempt++) {
            try {
                return await SessionStream.connect(url, this.token, this.timeoutMs);
            } catch (err) {
                if (err instanceof PathdError) err.attempts = attempt + 1;
                if (err instanceof ApiError && err.status === 503 && attempt < this.maxRetries) {
                    await sleep(Math.min((err.retryAfterS ?? 1) * 1000, this.maxRetryWaitMs));
                    continue;
                }
                throw err;
            }
        }
    }

    // ---- waypoint graphs (kind "graph") ----

    /** putMap of a GraphUpload (nodes and edges, or dimacsGraph(gr, co)). */
    async putGraph(id: string, graph: GraphUpload, opts?: WriteOptions): Promise<GraphMapInfo> {
        return (await this.upload('PUT', Client.mapPath(id), id, graph as unknown as MapJson, opts)) as unknown as GraphMapInfo;
    }

    /** createMap of a GraphUpload: the server picks the id from the content. */
    async createGraph(graph: GraphUpload): Promise<GraphMapInfo> {
        return (await this.upload('POST', '/v1/maps', undefined, graph as unknown as MapJson)) as unknown as GraphMapInfo;
    }

    /** patchMap of a graph: nodes and edges enabled or disabled, edge costs set, as the next version. */
    async patchGraph(id: string, patch: GraphPatch, opts?: WriteOptions): Promise<GraphMapInfo> {
        const r = await this.change<GraphMapInfo>('PATCH', Client.mapPath(id), id, [200], JSON.stringify(patch), 'application/json', opts);
        return { ...r.value, etag: r.headers.get('etag') ?? undefined };
    }

    /** getMapGraph: the graph as this version has it (an upload that builds it again). */
    async getGraph(id: string): Promise<GraphExport> {
        const r = await this.call<GraphExport>('GET', Client.mapPath(id, '/graph'), [200]);
        return { ...r.value, etag: r.headers.get('etag') ?? undefined };
    }

    /** findPath on a graph map: between node ids or points (the answer's start/goal say where they snapped). */
    async findGraphPath(id: string, req: GraphPathRequest): Promise<GraphPathAnswer> {
        return (await this.call<GraphPathAnswer>('POST', Client.mapPath(id, '/path'), [200], req)).value;
    }

    /** findPaths on a graph map: one deadline; a query that fails alone gets a BatchError slot. */
    async findGraphPaths(id: string, queries: GraphPathRequest[], opts: { deadline_ms?: number } = {}): Promise<GraphBatchAnswer> {
        const body: { queries: GraphPathRequest[]; deadline_ms?: number } = { queries };
        if (opts.deadline_ms !== undefined) body.deadline_ms = opts.deadline_ms;
        return (await this.call<GraphBatchAnswer>('POST', Client.mapPath(id, '/paths'), [200], body)).value;
    }

    /** getDistanceTable on a graph map: costs[i][j] from source i to target j (null: no path). */
    async graphTable(id: string, req: GraphTableRequest): Promise<GraphTableAnswer> {
        return (await this.call<GraphTableAnswer>('POST', Client.mapPath(id, '/table'), [200], req)).value;
    }

    /** createSession on a graph map: one agent between nodes, repaired after moves and PATCHes. */
    async createGraphSession(mapId: string, req: GraphSessionRequest): Promise<GraphSessionAnswer> {
        return (await this.call<GraphSessionAnswer>('POST', Client.mapPath(mapId, '/sessions'), [201], req)).value;
    }

    /** getSession of a graph session. */
    async getGraphSession(mapId: string, sid: string): Promise<GraphSessionAnswer> {
        return (await this.call<GraphSessionAnswer>('GET', Client.sessionPath(mapId, sid), [200])).value;
    }

    /** updateSession of a graph session: one GraphUpdate as JSON, or an array as NDJSON. */
    async updateGraphSession(mapId: string, sid: string, update: GraphUpdate | GraphUpdate[]): Promise<GraphSessionAnswer> {
        return (await this.updateSession(mapId, sid, update as Update | Update[])) as unknown as GraphSessionAnswer;
    }

    /** streamSession of a graph session: send() answers each GraphUpdate in order. */
    async openGraphStream(mapId: string, sid: string): Promise<SessionStream<GraphUpdate, GraphSessionAnswer>> {
        return (await this.openStream(mapId, sid)) as unknown as SessionStream<GraphUpdate, GraphSessionAnswer>;
    }

    // ---- the rest ----

    /** getInfo: version, every limit in effect, pool and cache statistics. */
    async getInfo(): Promise<Record<string, unknown>> {
        return (await this.call<Record<string, unknown>>('GET', '/v1/info', [200])).value;
    }
}

interface Pending<A> {
    resolve: (a: A) => void;
    reject: (e: Error) => void;
    timer: NodeJS.Timeout;
}

/** A session's WebSocket stream: one answer per Update, in order (a graph
 * session's: SessionStream<GraphUpdate, GraphSessionAnswer>). */
export class SessionStream<U = Update, A = SessionAnswer> {
    private pending: Pending<A>[] = [];
    private closedWith?: StreamClosedError;

    private constructor(private readonly ws: WebSocket, private readonly timeoutMs: number) {
        ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => this.onMessage(data, isBinary));
        ws.on('close', (code: number, reason: Buffer) => {
            this.closedWith = new StreamClosedError(code, `the stream closed (${code}${reason.length ? ': ' + reason.toString() : ''})`);
            for (const p of this.pending.splice(0)) {
                clearTimeout(p.timer);
                p.reject(this.closedWith);
            }
        });
        ws.on('error', () => {
            /* 'close' follows and rejects what is pending */
        });
    }

    static connect(url: string, token: string | undefined, timeoutMs: number): Promise<SessionStream> {
        return new Promise((resolve, reject) => {
            const headers: Record<string, string> = {};
            if (token) headers.Authorization = `Bearer ${token}`;
            const ws = new WebSocket(url, { headers, handshakeTimeout: timeoutMs, maxPayload: 64 << 20 });
            ws.once('open', () => resolve(new SessionStream(ws, timeoutMs)));
            ws.once('unexpected-response', (_req, res) => {
                const chunks: Buffer[] = [];
                res.on('data', (c: Buffer) => chunks.push(c));
                res.on('end', () => {
                    reject(apiError(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), retryAfter(res.headers as Record<string, string>)));
                    ws.terminate();
                });
            });
            ws.once('error', (err: Error) => {
                reject(/timed out/i.test(err.message) ? new TimeoutError(`WebSocket handshake: ${err.message}`) : new TransportError(`WebSocket: ${err.message}`));
            });
        });
    }

    private onMessage(data: WebSocket.RawData, isBinary: boolean): void {
        const p = this.pending.shift();
        if (!p) return; /* nothing asked: dropped */
        clearTimeout(p.timer);
        if (isBinary) return p.reject(new ProtocolError('a binary message on a session stream'));
        let v: unknown;
        try {
            v = JSON.parse(data.toString());
        } catch {
            return p.reject(new ProtocolError('a stream message that is not JSON'));
        }
        const e = (v as { error?: ErrorObject }).error;
        if (e) return p.reject(new ApiError(0, e.code, e.message, e.field));
        p.resolve(v as A);
    }

    /** Sends one Update; resolves with its answer (rejects with ApiError for
     * an error the server sends on the stream, which goes on). */
    send(update: U): Promise<A> {
        if (this.closedWith) return Promise.reject(this.closedWith);
        return new Promise((resolve, reject) => {
            const timer = setTimeout(() => {
                const i = this.pending.findIndex((p) => p.timer === timer);
                if (i >= 0) this.pending.splice(i, 1);
                reject(new TimeoutError(`no stream answer within ${this.timeoutMs} ms`));
            }, this.timeoutMs);
            this.pending.push({ resolve, reject, timer });
            this.ws.send(JSON.stringify(update), (err?: Error) => {
                if (err) {
                    const i = this.pending.findIndex((p) => p.timer === timer);
                    if (i >= 0) this.pending.splice(i, 1);
                    clearTimeout(timer);
                    reject(new TransportError(`WebSocket send: ${err.message}`));
                }
            });
        });
    }

    /** Resolves once the stream is closed (1000 from this side). */
    close(): Promise<void> {
        return new Promise((resolve) => {
            if (this.ws.readyState === WebSocket.CLOSED) return resolve();
            this.ws.once('close', () => resolve());
            this.ws.close(1000);
        });
    }

    /** The close, once the stream is closed (1001: the server stops). */
    get closed(): StreamClosedError | undefined {
        return this.closedWith;
    }
}
