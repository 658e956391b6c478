// graph.test.js -- the viewer's waypoint graphs (server/viewer_graph.js) in
// Debian's chromium against a real pathd, as a user works with them: a 2D
// graph (a jittered lattice with one-way, disabled edges and a disabled
// node) drawn top down; a start and a goal clicked; the path the page
// draws is the API's answer for the clicked points (the API's points
// projected here by harness.js's own projection, the pixels read off the
// page), its ends the nodes the test finds nearest to the clicks by brute
// force (what the API snaps to), with cost, expanded and time shown; an
// edge of the path switched off by a click is disabled in the API's export
// and drawn as disabled, and the path drawn again goes round it; a 3D
// graph (two floors and a ramp) in the orbit view, where a click near a
// node takes that node. Screenshots go to build/browser/.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const H = require('./harness');

let viewer, api, page;
const shot = (name) => page.screenshot({ path: path.join(H.ARTIFACTS, name) });
const V = (fn, arg) => page.evaluate(fn, arg);
const waitFor = (fn, arg, what, ms) => H.waitFor(page, fn, arg, what, ms);

before(async () => {
    viewer = await H.openViewer('#gcv');
    ({ api, page } = viewer);
});

after(() => H.closeViewer(viewer));

// ---- graphs ----

// A W x D lattice 10 apart, jittered; edges to the right and down; every
// 5th edge one-way, every 13th disabled, node 7 disabled.
function lattice(W, D) {
    const nodes = [], edges = [];
    let s = 12345;
    const rnd = () => { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648; };
    for (let z = 0; z < D; z++)
        for (let x = 0; x < W; x++) {
            const n = { id: `n${x}_${z}`, position: [x * 10 + rnd() * 3, z * 10 + rnd() * 3] };
            if (nodes.length === 7) n.enabled = false;
            nodes.push(n);
        }
    for (let z = 0; z < D; z++)
        for (let x = 0; x < W; x++) {
            for (const [dx, dz] of [[1, 0], [0, 1]]) {
                if (x + dx >= W || z + dz >= D) continue;
                const e = { from: `n${x}_${z}`, to: `n${x + dx}_${z + dz}` };
                if (edges.length % 5 === 4) e.oneway = true;
                if (edges.length % 13 === 6) e.enabled = false;
                edges.push(e);
            }
        }
    return { kind: 'graph', nodes, edges };
}

// Two 6 x 4 floors 10 apart, y = 0 and y = 6 (3D: [x, y, z], y up), joined
// by a ramp of three nodes.
function floors() {
    const nodes = [], edges = [];
    for (const [f, y] of [[0, 0], [1, 6]])
        for (let z = 0; z < 4; z++)
            for (let x = 0; x < 6; x++) {
                nodes.push({ id: `f${f}_${x}_${z}`, position: [x * 10, y, z * 10] });
                if (x) edges.push({ from: `f${f}_${x - 1}_${z}`, to: `f${f}_${x}_${z}` });
                if (z) edges.push({ from: `f${f}_${x}_${z - 1}`, to: `f${f}_${x}_${z}` });
            }
    nodes.push({ id: 'r1', position: [55, 2, 15] }, { id: 'r2', position: [55, 4, 5] });
    edges.push({ from: 'f0_5_3', to: 'r1' }, { from: 'r1', to: 'r2' }, { from: 'r2', to: 'f1_5_0' });
    return { kind: 'graph', nodes, edges };
}

// ---- helpers over the page ----

async function pickMap(id) {
    await waitFor((id_) => [...document.querySelectorAll('#map option')].some((o) => o.value === id_), id, `${id} listed`);
    await page.selectOption('#map', id);
    await waitFor((id_) => { const G = window.pathdViewer.graph.state; return G.data && G.data.map === id_ && G.id === id_; },
        id, `the graph of ${id}`);
}

// The camera matrix and the canvas's place on the page.
async function view() {
    const m = await V(() => ({ M: [...window.pathdViewer.graph.M()], w: window.pathdViewer.graph.state.cv.width,
        h: window.pathdViewer.graph.state.cv.height }));
    m.box = await page.locator('#gcv').boundingBox();
    return m;
}
// A graph position as the viewer draws it: [x, y] on the ground, [x, y, z] y up.
const world = (p) => (p.length === 2 ? [p[0], 0, p[1]] : p);

async function clickAt(p, dx = 0, dy = 0) {
    const v = await view(), s = H.project(v.M, v.w, v.h, world(p));
    assert.ok(s && s[0] >= 0 && s[1] >= 0 && s[0] < v.w && s[1] < v.h, `${p} is on screen`);
    await page.mouse.click(v.box.x + s[0] + dx, v.box.y + s[1] + dy);
}

const pixels = (pts) => V((pts_) => {
    const c = window.pathdViewer.graph.state.ctx;
    return pts_.map(([x, y]) => [...c.getImageData(Math.round(x), Math.round(y), 1, 1).data]);
}, pts);
// The 3 x 3 pixels around each point (an edge is 2 px wide and
// antialiased: its exact colour is in the block, not always at its centre).
const blocks = (pts) => V((pts_) => {
    const c = window.pathdViewer.graph.state.ctx;
    return pts_.map(([x, y]) => { const d = c.getImageData(Math.round(x) - 1, Math.round(y) - 1, 3, 3).data, out = [];
        for (let i = 0; i < 36; i += 4) out.push([d[i], d[i + 1], d[i + 2], d[i + 3]]);
        return out; });
}, pts);
const drawNow = () => V(() => window.pathdViewer.graph.frame());
const close = (c, rgb, tol = 40) => c[3] > 200 && rgb.every((v, i) => Math.abs(c[i] - v) <= tol);
const YELLOW = [255, 200, 0], RED = [220, 60, 60], GREY = [170, 180, 200], BLUE = [90, 200, 255], GREEN = [60, 230, 90], TEAL = [0, 220, 180];

// The enabled node nearest p (brute force over the API's export).
function nearest(exp, p) {
    let best = null, bd = Infinity;
    for (const n of exp.nodes) {
        if (n.enabled === false) continue;
        const d = Math.hypot(...n.position.map((v, k) => v - p[k]));
        if (d < bd) { bd = d; best = n; }
    }
    return best;
}

// Canvas points along the segments of pts (graph positions), between
// fractions f of each segment at least 30 px long.
async function along(pts, fracs) {
    const v = await view(), out = [];
    for (let i = 1; i < pts.length; i++) {
        const p = H.project(v.M, v.w, v.h, world(pts[i - 1])), q = H.project(v.M, v.w, v.h, world(pts[i]));
        if (!p || !q || Math.hypot(q[0] - p[0], q[1] - p[1]) < 30) continue;
        for (const f of fracs) out.push([p[0] + (q[0] - p[0]) * f, p[1] + (q[1] - p[1]) * f]);
    }
    return out;
}

// The page's path against the API's for the page's clicked points, and
// its pixels where the API's points project.
async function checkDrawnPath(id) {
    const st = await V(() => { const G = window.pathdViewer.graph.state;
        return { start: G.start, goal: G.goal, answer: G.answer, dim: G.dim, stats: document.getElementById('g_stats').textContent }; });
    const pt = (w) => (st.dim === 2 ? [w[0], w[2]] : w);
    const ref = await api('POST', `/v1/maps/${id}/path`, { start: { point: pt(st.start) }, goal: { point: pt(st.goal) },
        algorithm: 'astar', cache: false });
    assert.ok(ref.found, 'the API finds a path');
    assert.deepEqual(st.answer.path, ref.path, 'the page\'s path is the API\'s');
    assert.deepEqual(st.answer.edges, ref.edges);
    assert.deepEqual(st.answer.points, ref.points);
    assert.equal(st.answer.cost, ref.cost);
    assert.ok(st.stats.includes('cost ' + ref.cost.toFixed(3)), st.stats);
    assert.ok(st.stats.includes('expanded ' + st.answer.stats.expanded + ', time ' + st.answer.stats.time_us + ' us'), st.stats);
    await drawNow();
    const pts = await along(ref.points, [0.3, 0.4, 0.5, 0.6, 0.7]);
    assert.ok(pts.length >= 6, `${pts.length} sample points of the path on screen`);
    const px = await pixels(pts);
    const bad = px.map((c, i) => [c, pts[i]]).filter(([c]) => !close(c, YELLOW));
    assert.equal(bad.length, 0, `path pixels not yellow: ${JSON.stringify(bad.slice(0, 5))}`);
    return ref;
}

// ---- the tests ----

test('graph: a 2D graph drawn top down; clicks snap to the nodes the API snaps to; the drawn path is the API\'s; an edge switched off by click is drawn disabled', async () => {
    const g = lattice(12, 8);
    await api('PUT', '/v1/maps/lattice', g);
    await page.click('#reload');
    await pickMap('lattice');
    const exp = await api('GET', '/v1/maps/lattice/graph'), info = await api('GET', '/v1/maps/lattice');
    const st0 = await V(() => { const G = window.pathdViewer.graph.state; return { n: G.data.nodes.length, m: G.data.edges.length, mode: G.cam.mode }; });
    assert.deepEqual(st0, { n: info.graph.nodes, m: info.graph.edges, mode: 'top' });
    assert.equal(await page.isVisible('#cv0'), false, 'the grid panes are hidden for a graph');
    assert.equal(await page.isVisible('#gl'), false, 'the navmesh view is hidden for a graph');
    await drawNow();

    // What the graph is drawn as: a one-way edge blue (arrow at 0.6), a
    // disabled one red, a disabled node red.
    const byId = new Map(exp.nodes.map((n) => [String(n.id), n]));
    const ends = (e) => [byId.get(String(e.from)).position, byId.get(String(e.to)).position];
    const ow = exp.edges.find((e) => e.oneway && e.enabled !== false), off = exp.edges.find((e) => e.enabled === false);
    const owPx = await blocks(await along(ends(ow), [0.3, 0.4]));
    assert.ok(owPx.every((bl) => bl.some((c) => close(c, BLUE, 10))), `one-way edge pixels ${JSON.stringify(owPx)}`);
    const offPx = await blocks(await along(ends(off), [0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75]));
    assert.ok(offPx.filter((bl) => bl.some((c) => close(c, RED, 10))).length >= 4, `disabled edge pixels ${JSON.stringify(offPx)}`);
    assert.ok(!offPx.some((bl) => bl.some((c) => close(c, GREY, 25))), 'a disabled edge is not drawn as an enabled one');
    const v0 = await view(), dn = H.project(v0.M, v0.w, v0.h, world(exp.nodes[7].position));
    assert.ok(close((await pixels([dn]))[0], RED), 'the disabled node is red');

    // Clicks near (not on) two nodes far apart: the API snaps each to the
    // node nearest the click, which the test finds by brute force.
    const P1 = [exp.nodes[13].position[0] + 1.7, exp.nodes[13].position[1] - 1.1];
    const P2 = [exp.nodes[94].position[0] - 1.2, exp.nodes[94].position[1] + 1.6];
    await page.selectOption('#g_mode', 'path');
    await clickAt(P1);
    await waitFor(() => window.pathdViewer.graph.state.start, null, 'the start');
    await clickAt(P2);
    await waitFor(() => window.pathdViewer.graph.state.answer, null, 'the answer');
    const ref = await checkDrawnPath('lattice');
    const st = await V(() => window.pathdViewer.graph.state.answer);
    assert.equal(st.start.node, nearest(exp, P1).id, 'start snapped to the node nearest the click');
    assert.equal(st.goal.node, nearest(exp, P2).id, 'goal snapped to the node nearest the click');
    assert.ok(st.start.snapped && st.goal.snapped);
    assert.equal(st.start.node, 'n1_1');
    // The snapped ends are ringed where those nodes project.
    const v = await view();
    for (const [end, n] of [['start', nearest(exp, P1)], ['goal', nearest(exp, P2)]]) {
        const c = H.project(v.M, v.w, v.h, world(n.position));
        const ring = await pixels([[c[0] + 9, c[1]], [c[0] - 9, c[1]], [c[0], c[1] + 9], [c[0], c[1] - 9]]);
        const rgb = end === 'start' ? GREEN : [255, 80, 200];
        assert.ok(ring.filter((p) => close(p, rgb)).length >= 3, `${end} ring at ${n.id}: ${JSON.stringify(ring)}`);
    }
    await shot('graph-path.png');

    // Switch off an edge of the path by a click at its middle.
    const k = ref.edges[Math.floor(ref.edges.length / 2)], e = exp.edges[k];
    assert.notEqual(e.enabled, false);
    const [pa, pb] = ends(e), mid = [(pa[0] + pb[0]) / 2, (pa[1] + pb[1]) / 2];
    await page.selectOption('#g_mode', 'edge');
    await clickAt(mid);
    await waitFor(() => window.pathdViewer.graph.state.version === 2, null, 'the next version');
    await waitFor((k_) => { const A = window.pathdViewer.graph.state.answer; return A && A.map_version === 2 && !A.edges.includes(k_); }, k, 'the new path');
    const exp2 = await api('GET', '/v1/maps/lattice/graph'), info2 = await api('GET', '/v1/maps/lattice');
    assert.equal(exp2.edges[k].enabled, false, 'the clicked edge is disabled in the API');
    assert.equal(info2.graph.disabled_edges, info.graph.disabled_edges + 1, 'and only it');
    assert.match(await page.$eval('#map option:checked', (o) => o.text), /, v2\)$/, 'the map list shows the new version');
    await page.selectOption('#g_mode', 'path');
    const ref2 = await checkDrawnPath('lattice');
    assert.ok(!ref2.edges.includes(k));
    const px = await blocks(await along([pa, pb], [0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75]));
    assert.ok(px.filter((bl) => bl.some((c) => close(c, RED, 10))).length >= 4, `switched-off edge pixels ${JSON.stringify(px)}`);
    assert.ok(!px.some((bl) => bl.some((c) => close(c, GREY, 25) || close(c, YELLOW, 25) || close(c, BLUE, 25))),
        `switched-off edge drawn as enabled: ${JSON.stringify(px)}`);
    await shot('graph-disabled.png');
});

test('graph: the live sessions\' plans are drawn, follow their updates and go when the session ends', async () => {
    await api('PUT', '/v1/maps/plans', lattice(12, 8));
    await page.click('#reload');
    await pickMap('plans');
    assert.equal(await page.textContent('#g_stats'), '-', 'the last map\'s answer is not shown for this one');
    const base = '/v1/maps/plans/sessions';
    const s0 = await api('POST', base, { start: 'n1_1', goal: 'n10_6' });
    assert.ok(s0.found && s0.points.length > 5, 'the session has a plan');
    await page.click('#g_sessions');
    const plan = (sid) => waitFor((sid_) => { const p = window.pathdViewer.graph.state.plans.find((x) => x.session_id === sid_);
        return p ? { path: p.path, points: p.points } : null; }, sid, 'the session\'s plan drawn');
    const checkPlan = async (sid) => {
        const ref = await api('GET', `${base}/${sid}`), got = await plan(sid);
        assert.deepEqual(got.points, ref.points, 'the plan drawn is the session\'s answer');
        await drawNow();
        const pts = await along(ref.points, [0.3, 0.4, 0.5, 0.6, 0.7]);
        assert.ok(pts.length >= 6, `${pts.length} sample points of the plan on screen`);
        const bad = (await pixels(pts)).map((c, i) => [c, pts[i]]).filter(([c]) => !close(c, TEAL));
        assert.equal(bad.length, 0, `plan pixels not teal: ${JSON.stringify(bad.slice(0, 5))}`);
        const v = await view(), a = H.project(v.M, v.w, v.h, world(ref.points[0]));
        assert.ok(close((await pixels([a]))[0], TEAL), 'a disc at the agent\'s node');
        return ref;
    };
    await checkPlan(s0.session_id);
    // The agent moves: the plan drawn follows.
    const moved = await api('POST', `${base}/${s0.session_id}/updates`, { position: 'n3_5' });
    assert.equal(String(moved.position), 'n3_5');
    await waitFor((sid) => { const p = window.pathdViewer.graph.state.plans.find((x) => x.session_id === sid);
        return p && String(p.path[0]) === 'n3_5'; }, s0.session_id, 'the plan from the agent\'s new node');
    await checkPlan(s0.session_id);
    await shot('graph-sessions.png');
    // Ended: no longer drawn.
    await api('DELETE', `${base}/${s0.session_id}`);
    await waitFor(() => window.pathdViewer.graph.state.plans.length === 0, null, 'the ended session gone');
    await page.click('#g_sessions');
});

test('graph: a 3D graph in the orbit view; a click near a node takes that node', async () => {
    await api('PUT', '/v1/maps/floors', floors());
    await page.click('#reload');
    await pickMap('floors');
    const exp = await api('GET', '/v1/maps/floors/graph');
    assert.equal(exp.dimensions, 3);
    assert.equal(await V(() => window.pathdViewer.graph.state.cam.mode), 'orbit');
    await page.selectOption('#g_mode', 'path');
    await V(() => { const G = window.pathdViewer.graph.state; G.start = G.goal = G.answer = null; });
    const A = exp.nodes.find((n) => n.id === 'f0_0_0'), B = exp.nodes.find((n) => n.id === 'f1_0_3');
    await clickAt(A.position, 4, -3); // a few pixels off the node
    await waitFor(() => window.pathdViewer.graph.state.start, null, 'the start');
    await clickAt(B.position, -3, 4);
    await waitFor(() => window.pathdViewer.graph.state.answer, null, 'the answer');
    const ans = await V(() => window.pathdViewer.graph.state.answer);
    assert.equal(ans.start.node, 'f0_0_0');
    assert.equal(ans.goal.node, 'f1_0_3');
    assert.equal(ans.start.distance, 0, 'the click took the node itself');
    assert.ok(ans.path.includes('r1') && ans.path.includes('r2'), 'the path climbs the ramp');
    await checkDrawnPath('floors');
    await shot('graph-3d.png');
});
