// clients/node's waypoint graph calls against a real pathd (PATHD_BIN):
// uploads (JSON and DIMACS), paths between ids and points, batches, tables,
// nearest of goals, partial paths, tag filters, PATCH, the export, and
// graph sessions over HTTP, NDJSON and the WebSocket stream. Every cost is
// checked against the plain Dijkstra below, which shares nothing with the
// server or the client.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { Client, ApiError, isBatchError, dimacsGraph } = require('../dist/index.js');

const { startServer } = require('../testlib/server.js');

// ---- the reference: a plain Dijkstra over the test's own edge list ----

function rng(seed) {
    let s = seed >>> 0;
    return () => {
        s = (s + 0x6d2b79f5) >>> 0;
        let t = s;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

/** g: { n, pos, edges: [{a, b, cost, oneway, tags, on}], nodeOn, nodeTags }.
 * Returns the cost from s to every node (Infinity when unreached), walking
 * no edge and entering no node carrying a tag of `exclude`. */
function dijkstra(g, s, exclude = []) {
    const dist = new Array(g.n).fill(Infinity);
    const done = new Array(g.n).fill(false);
    const adj = Array.from({ length: g.n }, () => []);
    const bad = (tags) => (tags || []).some((t) => exclude.includes(t));
    for (const e of g.edges) {
        if (!e.on || bad(e.tags)) continue;
        adj[e.a].push([e.b, e.cost]);
        if (!e.oneway) adj[e.b].push([e.a, e.cost]);
    }
    if (!g.nodeOn[s]) return dist;
    dist[s] = 0;
    for (;;) {
        let u = -1;
        for (let i = 0; i < g.n; i++) if (!done[i] && dist[i] < Infinity && (u < 0 || dist[i] < dist[u])) u = i;
        if (u < 0) return dist;
        done[u] = true;
        for (const [v, c] of adj[u]) {
            if (!g.nodeOn[v] || bad(g.nodeTags[v])) continue;
            if (dist[u] + c < dist[v]) dist[v] = dist[u] + c;
        }
    }
}

/** A random graph: ids alternate strings and integers, 2D positions,
 * costs given or left to the server (length x 1), some one-way, some tagged. */
function randomGraph(seed, n, m) {
    const r = rng(seed);
    const g = { n, ids: [], pos: [], edges: [], nodeOn: [], nodeTags: [] };
    for (let i = 0; i < n; i++) {
        g.ids.push(i % 2 ? `n${i}` : i + 1000);
        g.pos.push([Math.round(r() * 1000) / 10, Math.round(r() * 1000) / 10]);
        g.nodeOn.push(true);
        g.nodeTags.push(r() < 0.1 ? ['water'] : undefined);
    }
    for (let k = 0; k < m; k++) {
        const a = Math.floor(r() * n);
        let b = Math.floor(r() * n);
        if (b === a) b = (a + 1) % n;
        const len = Math.hypot(g.pos[a][0] - g.pos[b][0], g.pos[a][1] - g.pos[b][1]);
        const given = r() < 0.7;
        const cost = given ? Math.round((len * (1 + r()) + r() * 5) * 100) / 100 : len;
        g.edges.push({ a, b, cost, given, oneway: r() < 0.2, tags: r() < 0.1 ? ['toll'] : undefined, on: true });
    }
    return g;
}

function upload(g) {
    return {
        kind: 'graph',
        nodes: g.ids.map((id, i) => (g.nodeTags[i] ? { id, position: g.pos[i], tags: g.nodeTags[i] } : { id, position: g.pos[i] })),
        edges: g.edges.map((e, i) => {
            const o = { from: g.ids[e.a], to: g.ids[e.b], id: `e${i}` };
            if (e.given) o.cost = e.cost;
            if (e.oneway) o.oneway = true;
            if (e.tags) o.tags = e.tags;
            return o;
        }),
    };
}

const near = (a, b) => Math.abs(a - b) <= 1e-3 * Math.max(1, Math.abs(b));

/** The answer's path is a walk over the graph's edges from s to t whose costs add up to its cost. */
function checkWalk(g, ans, s, t) {
    const index = new Map(g.ids.map((id, i) => [String(id), i]));
    assert.equal(index.get(String(ans.path[0])), s);
    assert.equal(index.get(String(ans.path[ans.path.length - 1])), t);
    assert.equal(ans.edges.length, ans.path.length - 1);
    let sum = 0;
    ans.edges.forEach((ei, k) => {
        const e = g.edges[ei];
        const u = index.get(String(ans.path[k])), v = index.get(String(ans.path[k + 1]));
        assert.ok((e.a === u && e.b === v) || (!e.oneway && e.a === v && e.b === u), `edge ${ei} joins ${u} and ${v}`);
        sum += e.cost;
    });
    assert.ok(near(sum, ans.cost), `edges add up to ${sum}, answered ${ans.cost}`);
}

let srv, pathd;
before(async () => {
    srv = await startServer();
    pathd = new Client({ baseUrl: srv.url, timeoutMs: 10000 });
});
after(async () => {
    assert.equal(await srv.stop(), 0, 'pathd exits 0 on SIGTERM');
});

test('graph paths against a reference Dijkstra: every algorithm, ids and points, batches', async () => {
    for (let round = 0; round < 4; round++) {
        const g = randomGraph(11 + round, 60, 150);
        const info = await pathd.putGraph('g', upload(g));
        assert.equal(info.kind, 'graph');
        assert.equal(info.graph.nodes, 60);
        assert.equal(info.graph.edges, 150);
        const r = rng(round);
        const queries = [];
        for (let q = 0; q < 40; q++) {
            const s = Math.floor(r() * g.n), t = Math.floor(r() * g.n);
            const want = dijkstra(g, s)[t];
            const algorithm = ['dijkstra', 'astar', 'alt', 'auto'][q % 4];
            const a = await pathd.findGraphPath('g', { start: g.ids[s], goal: g.ids[t], algorithm, cache: false });
            assert.equal(a.found, want < Infinity, `${s} -> ${t} (${algorithm})`);
            if (a.found) {
                assert.ok(near(a.cost, want), `${s} -> ${t} (${algorithm}): ${a.cost}, reference ${want}`);
                checkWalk(g, a, s, t);
            } else assert.equal(a.reason, 'unreachable');
            queries.push({ s, t, want });
        }
        const b = await pathd.findGraphPaths('g', queries.map((q) => ({ start: g.ids[q.s], goal: g.ids[q.t] })));
        assert.equal(b.results.length, queries.length);
        b.results.forEach((a, i) => {
            assert.ok(!isBatchError(a));
            assert.equal(a.found, queries[i].want < Infinity);
            if (a.found) assert.ok(near(a.cost, queries[i].want));
        });
    }
    // Points snap to the nearest node; the answer says which and how far.
    const g = randomGraph(5, 40, 100);
    await pathd.putGraph('g', upload(g));
    for (let q = 0; q < 20; q++) {
        const p = [q * 5 + 0.25, 100 - q * 4.5];
        let best = 0;
        const d = (i) => Math.hypot(g.pos[i][0] - p[0], g.pos[i][1] - p[1]);
        for (let i = 1; i < g.n; i++) if (d(i) < d(best)) best = i;
        const a = await pathd.findGraphPath('g', { start: { point: p }, goal: g.ids[0] });
        assert.equal(a.start.snapped, true);
        assert.equal(String(a.start.node), String(g.ids[best]));
        assert.ok(near(a.start.distance, d(best)));
        const want = dijkstra(g, best)[0];
        assert.equal(a.found, want < Infinity);
        if (a.found) assert.ok(near(a.cost, want));
    }
    // snap 'edge' names the edge, where on it, and the point.
    const e = await pathd.findGraphPath('g', { start: { point: g.pos[g.edges[0].a] }, goal: g.ids[1], snap: 'edge' });
    assert.equal(e.start.snapped, true);
    assert.equal(typeof e.start.edge, 'number');
    assert.ok(e.start.at >= 0 && e.start.at <= 1);
    assert.equal(e.start.point.length, 2);
    // A bad query in a batch is its own slot.
    const b = await pathd.findGraphPaths('g', [{ start: g.ids[0], goal: 'nope' }, { start: g.ids[0], goal: g.ids[0] }]);
    assert.ok(isBatchError(b.results[0]));
    assert.equal(b.results[0].error.field, 'queries[0].goal');
    assert.equal(b.results[1].found, true);
    await assert.rejects(pathd.findGraphPath('g', { start: 'nope', goal: g.ids[0] }),
        (err) => err instanceof ApiError && err.status === 422 && err.field === 'start');
});

test('tables, nearest of goals, partial paths, exclude_tags against the reference', async () => {
    const g = randomGraph(21, 50, 110);
    await pathd.putGraph('t', upload(g));
    const src = [0, 3, 7, 12], dst = [1, 4, 9, 20, 33];
    const tab = await pathd.graphTable('t', { sources: src.map((i) => g.ids[i]), targets: dst.map((i) => g.ids[i]), paths: true });
    src.forEach((s, i) => {
        const d = dijkstra(g, s);
        dst.forEach((t, j) => {
            if (d[t] === Infinity) assert.equal(tab.costs[i][j], null);
            else assert.ok(near(tab.costs[i][j], d[t]), `table ${s} -> ${t}`);
            assert.equal(tab.paths[i][j] === null, d[t] === Infinity);
        });
    });
    for (let s = 0; s < 10; s++) {
        const goals = [s + 11, s + 22, s + 33];
        const d = dijkstra(g, s);
        const best = Math.min(...goals.map((t) => d[t]));
        const a = await pathd.findGraphPath('t', { start: g.ids[s], goals: goals.map((t) => g.ids[t]) });
        assert.equal(a.found, best < Infinity);
        if (a.found) {
            assert.ok(near(a.cost, best));
            assert.ok(near(d[goals[a.goal_index]], best), 'goal_index names a cheapest goal');
        }
        const x = dijkstra(g, s, ['toll', 'water']);
        for (const t of [s + 1, s + 17]) {
            const f = await pathd.findGraphPath('t', { start: g.ids[s], goal: g.ids[t], exclude_tags: ['toll', 'water'] });
            assert.equal(f.found, x[t] < Infinity, `exclude_tags ${s} -> ${t}`);
            if (f.found) assert.ok(near(f.cost, x[t]));
        }
    }
    // A goal no path reaches: partial answers the way to the node nearest it.
    const iso = {
        kind: 'graph',
        nodes: [{ id: 'a', position: [0, 0] }, { id: 'b', position: [10, 0] }, { id: 'c', position: [20, 0] }, { id: 'far', position: [25, 0] }],
        edges: [{ from: 'a', to: 'b' }, { from: 'b', to: 'c', cost: 4 }],
    };
    await pathd.putGraph('iso', iso);
    const p = await pathd.findGraphPath('iso', { start: 'a', goal: 'far', partial: true });
    assert.equal(p.found, false);
    assert.equal(p.partial, true);
    assert.deepEqual(p.path, ['a', 'b', 'c']);
    const budget = await pathd.findGraphPath('iso', { start: 'a', goal: 'c', max_expanded: 1, algorithm: 'dijkstra', cache: false });
    assert.equal(budget.found, false);
    assert.equal(budget.reason, 'budget');
});

test('PATCH, the export and DIMACS uploads', async () => {
    const g = randomGraph(31, 40, 100);
    await pathd.putGraph('p', upload(g));
    const r = rng(99);
    for (let round = 0; round < 5; round++) {
        const patch = { nodes: [], edges: [] };
        const n = Math.floor(r() * g.n);
        g.nodeOn[n] = !g.nodeOn[n];
        patch.nodes.push({ id: g.ids[n], enabled: g.nodeOn[n] });
        for (let k = 0; k < 4; k++) {
            const i = Math.floor(r() * g.edges.length);
            if (r() < 0.5) {
                g.edges[i].on = !g.edges[i].on;
                patch.edges.push(k % 2 ? { index: i, enabled: g.edges[i].on } : { id: `e${i}`, enabled: g.edges[i].on });
            } else {
                g.edges[i].cost = Math.round(r() * 5000) / 100;
                patch.edges.push({ index: i, cost: g.edges[i].cost });
            }
        }
        const info = await pathd.patchGraph('p', patch);
        assert.equal(info.version, round + 2);
        const ex = await pathd.getGraph('p');
        assert.equal(ex.version, round + 2);
        assert.equal(ex.nodes.length, g.n);
        ex.edges.forEach((e, i) => {
            assert.ok(near(e.cost, g.edges[i].cost));
            assert.equal(e.enabled !== false, g.edges[i].on);
        });
        ex.nodes.forEach((x, i) => assert.equal(x.enabled !== false, g.nodeOn[i]));
        for (let q = 0; q < 15; q++) {
            const s = Math.floor(r() * g.n), t = Math.floor(r() * g.n);
            if (!g.nodeOn[s] || !g.nodeOn[t]) continue;
            const want = dijkstra(g, s)[t];
            const a = await pathd.findGraphPath('p', { start: g.ids[s], goal: g.ids[t] });
            assert.equal(a.found, want < Infinity, `after PATCH ${round}: ${s} -> ${t}`);
            if (a.found) assert.ok(near(a.cost, want));
        }
    }
    // The export uploads back as it is, to the same answers.
    const ex = await pathd.getGraph('p');
    delete ex.etag;
    const back = { kind: 'graph', nodes: ex.nodes, edges: ex.edges };
    await pathd.putGraph('p2', back);
    const a1 = await pathd.findGraphPath('p', { start: g.ids[2], goal: g.ids[30] });
    const a2 = await pathd.findGraphPath('p2', { start: g.ids[2], goal: g.ids[30] });
    assert.equal(a1.found, a2.found);
    if (a1.found) assert.ok(near(a1.cost, a2.cost));
    await assert.rejects(pathd.patchGraph('p', { edges: [{ index: 100000, enabled: false }] }),
        (e) => e instanceof ApiError && e.status === 422 && /^edges\[0\]/.test(e.field));

    // DIMACS: a 4 x 4 grid of one-way arcs both ways, costs 1..; ids 1..N.
    const arcs = [];
    const dg = { n: 16, ids: [], pos: [], edges: [], nodeOn: new Array(16).fill(true), nodeTags: [] };
    let co = 'c a test graph\np aux sp co 16\n';
    for (let i = 0; i < 16; i++) {
        dg.ids.push(i + 1);
        co += `v ${i + 1} ${(i % 4) * 10} ${Math.floor(i / 4) * 10}\n`;
    }
    for (let i = 0; i < 16; i++) {
        for (const j of [i + 1, i + 4]) {
            if (j >= 16 || (j === i + 1 && i % 4 === 3)) continue;
            const w1 = 10 + ((i * 7 + j) % 9), w2 = 10 + ((i + j * 5) % 11);
            arcs.push(`a ${i + 1} ${j + 1} ${w1}`, `a ${j + 1} ${i + 1} ${w2}`);
            dg.edges.push({ a: i, b: j, cost: w1, oneway: true, on: true }, { a: j, b: i, cost: w2, oneway: true, on: true });
        }
    }
    const gr = `c arcs\np sp 16 ${arcs.length}\n${arcs.join('\n')}\n`;
    const info = await pathd.putGraph('dimacs', dimacsGraph(gr, co));
    assert.equal(info.graph.nodes, 16);
    assert.equal(info.graph.arcs, arcs.length);
    for (const [s, t] of [[0, 15], [15, 0], [3, 12], [5, 6]]) {
        const a = await pathd.findGraphPath('dimacs', { start: s + 1, goal: t + 1, algorithm: 'dijkstra' });
        assert.ok(near(a.cost, dijkstra(dg, s)[t]), `DIMACS ${s + 1} -> ${t + 1}`);
        checkWalk(dg, a, s, t);
    }
    await assert.rejects(pathd.putGraph('bad', dimacsGraph('p sp 2 1\na 1 3 5\n', 'p aux sp co 2\nv 1 0 0\nv 2 1 1\n')),
        (e) => e instanceof ApiError && e.status === 422 && e.field === 'dimacs.gr');
});

test('graph sessions: create, moves, PATCH repair, NDJSON and the stream', async () => {
    const g = randomGraph(41, 50, 140);
    await pathd.putGraph('s', upload(g));
    const idx = (id) => g.ids.findIndex((x) => String(x) === String(id));
    const check = (a, what) => {
        const s = idx(a.position), t = idx(a.goal);
        const want = dijkstra(g, s)[t];
        assert.equal(a.found, want < Infinity, what);
        if (a.found) {
            assert.ok(near(a.cost, want), `${what}: ${a.cost}, reference ${want}`);
            checkWalk(g, a, s, t);
        }
    };
    const s0 = await pathd.createGraphSession('s', { start: g.ids[0], goal: g.ids[25], ttl_s: 60 });
    assert.equal(s0.algorithm, 'dstar_lite');
    check(s0, 'created');
    const sid = s0.session_id;
    check(await pathd.updateGraphSession('s', sid, { position: g.ids[3] }), 'moved');
    check(await pathd.updateGraphSession('s', sid, [{ goal: g.ids[30] }, { position: g.ids[4] }]), 'NDJSON');
    // A PATCH on the route: the session repairs to the new version.
    const on = await pathd.getGraphSession('s', sid);
    if (on.found && on.edges.length) {
        const ei = on.edges[0];
        g.edges[ei].on = false;
        await pathd.patchGraph('s', { edges: [{ index: ei, enabled: false }] });
        const after = await pathd.getGraphSession('s', sid);
        assert.equal(after.stats.rebase, 'incremental');
        check(after, 'after PATCH');
    }
    const ws = await pathd.openGraphStream('s', sid);
    const r = rng(7);
    for (let k = 0; k < 12; k++) {
        const up = k % 3 ? { position: g.ids[Math.floor(r() * g.n)] } : { goal: g.ids[Math.floor(r() * g.n)] };
        const a = await ws.send(up);
        if (a.unchanged) continue;
        check(a, `stream ${k}`);
    }
    await assert.rejects(ws.send({ position: 'nope' }), (e) => e instanceof ApiError && e.field === 'position');
    await ws.close();
    // Points snap to nodes: [x, y, 0] on a 2D graph.
    const p = await pathd.createGraphSession('s', { start: [...g.pos[5], 0], goal: [...g.pos[6], 0] });
    assert.equal(String(p.position), String(g.ids[5]));
    await pathd.deleteSession('s', p.session_id);
    await pathd.deleteSession('s', sid);
});

// Door groups (graphops28's server): skipped, and said so, when this pathd
// has none (/v1/info names no graph_max_doors).
test('door groups: upload, PATCH by name, paths against the reference', async (t) => {
    const info = await pathd.request('GET', '/v1/info');
    if (!info.text.includes('"graph_max_doors"')) return t.skip('this pathd has no door groups (graphops28 adds them)');
    const g = randomGraph(51, 40, 100);
    const up = upload(g);
    up.doors = [
        { name: 'd0', edges: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] },
        { name: 'd1', edges: Array.from({ length: 10 }, (_, i) => `e${i + 10}`), nodes: [g.ids[5]], open: false },
    ];
    let m = await pathd.putGraph('doors', up);
    assert.equal(m.graph.doors.length, 2);
    const states = [[true, false], [false, false], [false, true], [true, true]];
    for (const [k, [d0, d1]] of states.entries()) {
        if (k > 0) m = await pathd.patchGraph('doors', { doors: [{ name: 'd0', open: d0 }, { name: 'd1', open: d1 }] });
        for (let i = 0; i < 20; i++) g.edges[i].on = i < 10 ? d0 : d1;
        g.nodeOn[5] = d1;
        assert.deepEqual(m.graph.doors.map((d) => d.open), [d0, d1]);
        for (let s = 0; s < g.n; s += 3) {
            const t2 = (s * 7 + 11) % g.n;
            if (!g.nodeOn[s] || !g.nodeOn[t2]) continue;
            const want = dijkstra(g, s)[t2];
            const a = await pathd.findGraphPath('doors', { start: g.ids[s], goal: g.ids[t2] });
            assert.equal(a.found, want < Infinity, `doors ${k}: ${s} -> ${t2}`);
            if (a.found) assert.ok(near(a.cost, want), `doors ${k}: ${s} -> ${t2}: ${a.cost}, reference ${want}`);
        }
    }
    await assert.rejects(pathd.patchGraph('doors', { doors: [{ name: 'nope', open: false }] }),
        (e) => e instanceof ApiError && e.status === 422 && e.field === 'doors[0].name');
});
