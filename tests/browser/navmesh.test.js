// navmesh.test.js -- the viewer's navmesh worlds (server/viewer_nav.js over
// server/viewer_gl.js) in Debian's chromium against a real pathd, as a user
// works with them: RecastDemo's nav_test.obj ($PATHD_MESH_DIR) dropped on
// the page and a generated three-storey building; start and goal clicked on
// the surface; the paths of both algorithms drawn where the API's points
// project (the projection written in harness.js from the camera matrix,
// the pixels read off the page); a click landing on the point the API
// snaps to; a crowd made and steered by clicks moving between two
// screenshots; an obstacle added by click seen in the map info and walked
// round, then removed by a click; a 1,000-agent crowd's ticks all received
// (counted by their frame numbers, never timed). Screenshots go to
// build/browser/ (BROWSER_ARTIFACTS). Last, the page served by nginx below a
// path prefix, as a fleet's proxy may: the map list, the mesh, a path and a
// crowd's WebSocket stream all work through it.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const H = require('./harness');
const net = require('node:net');
const os = require('node:os');
const { spawn } = require('node:child_process');

let viewer, srv, api, page;
const shot = (name) => page.screenshot({ path: path.join(H.ARTIFACTS, name) });
const V = (fn, arg) => page.evaluate(fn, arg);
const waitFor = (fn, arg, what, ms) => H.waitFor(page, fn, arg, what, ms);
const dist = (a, c) => Math.hypot(a[0] - c[0], a[1] - c[1], a[2] - c[2]);
// A pick lands on the drawn surface (Detour's detail triangles), which
// lies within detail_sample_max_error x cell_height (0.2 by default) above
// the ground that the API snaps points to (the input triangles). A click
// at the screen position of a ground point meets that raised surface a
// little before the ground along the view ray (parallax: up to ~1.5 x 0.2
// across at the test's camera pitches), so the same spot is within 0.3
// across and 0.25 up or down; another floor is metres away.
const near = (a, c) => Math.hypot(a[0] - c[0], a[2] - c[2]) < 0.3 && Math.abs(a[1] - c[1]) < 0.25;

before(async () => {
    viewer = await H.openViewer('#gl');
    ({ srv, api, page } = viewer);
});

after(() => H.closeViewer(viewer));

// ---- helpers over the page ----

async function dropFiles(files) {
    await page.evaluate((fs_) => {
        const dt = new DataTransfer();
        for (const f of fs_) dt.items.add(new File([f.text], f.name, { type: '' }));
        document.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, files);
}

async function pickMap(id) {
    await page.selectOption('#map', id);
    await waitFor((id_) => { const N = window.pathdViewer.nav.state; return N.mesh && N.mesh.id === id_ && N.id === id_; },
        id, `the mesh of ${id}`);
}

async function setChecked(id, on) {
    if ((await page.isChecked('#' + id)) !== on) await page.click('#' + id);
}

// The camera matrix and the overlay's place on the page.
async function view() {
    const m = await V(() => ({ M: [...window.pathdViewer.nav.M()], w: window.pathdViewer.nav.state.ov.width,
        h: window.pathdViewer.nav.state.ov.height }));
    m.box = await page.locator('#ov').boundingBox();
    return m;
}

// Where world point p is on the page (the projection of harness.js).
async function screenOf(p) {
    const v = await view(), s = H.project(v.M, v.w, v.h, p);
    assert.ok(s, `${p} is behind the camera`);
    return { x: v.box.x + s[0], y: v.box.y + s[1] };
}

async function clickWorld(p) {
    const s = await screenOf(p);
    await page.mouse.click(s.x, s.y);
}

// Overlay pixels (rgba) at canvas points pts.
const overlayPixels = (pts) => V((pts_) => {
    const c = window.pathdViewer.nav.state.octx;
    return pts_.map(([x, y]) => [...c.getImageData(Math.round(x), Math.round(y), 1, 1).data]);
}, pts);

// Frames: the viewer draws one now (no waiting for the next animation frame).
const drawNow = () => V(() => window.pathdViewer.nav.frame());

// Checks that the drawn path of algorithm algo is the API's answer for the
// viewer's start and goal, and that its pixels are on the page where the
// API's points project.
async function checkDrawnPath(id, algo, rgbTest, extra = {}) {
    const st = await V(() => { const N = window.pathdViewer.nav.state; return { start: N.start, goal: N.goal, answers: N.answers }; });
    const ref = await api('POST', `/v1/maps/${id}/path`, { start: st.start, goal: st.goal, algorithm: algo, ...extra });
    const mine = st.answers[algo];
    assert.equal(mine.algorithm, algo);
    assert.deepEqual(mine.path, ref.path, `${algo}: the viewer's path is the API's`);
    assert.equal(mine.length, ref.length);
    // Only this algorithm's path shown, then sample each segment between
    // its ends (away from the corner markers), projected here.
    for (const a of ['polyanya', 'detour']) await setChecked('n_show_' + a, a === algo);
    await drawNow();
    const v = await view(), pts = [];
    for (let i = 1; i < ref.path.length; i++) {
        const p = H.project(v.M, v.w, v.h, ref.path[i - 1]), q = H.project(v.M, v.w, v.h, ref.path[i]);
        if (!p || !q) continue;
        const len = Math.hypot(q[0] - p[0], q[1] - p[1]);
        if (len < 30) continue;
        for (const f of [0.35, 0.5, 0.65]) {
            const x = p[0] + (q[0] - p[0]) * f, y = p[1] + (q[1] - p[1]) * f;
            if (x >= 0 && y >= 0 && x < v.w && y < v.h) pts.push([x, y]);
        }
    }
    assert.ok(pts.length >= 3, `${algo}: ${pts.length} sample points of the path on screen`);
    const px = await overlayPixels(pts);
    const bad = px.map((c, i) => [c, pts[i]]).filter(([c]) => !rgbTest(c));
    assert.equal(bad.length, 0, `${algo}: path pixels not of its colour: ${JSON.stringify(bad.slice(0, 5))}`);
    for (const a of ['polyanya', 'detour']) await setChecked('n_show_' + a, true);
    return ref;
}
const isRed = (c) => c[3] > 200 && c[0] > 200 && c[1] < 90 && c[2] < 90;
const isBlue = (c) => c[3] > 200 && c[2] > 200 && c[0] < 90;

// nav_test's test cases: "pf sx sy sz ex ey ez flags flags".
function testCases() {
    const file = path.join(H.MESH_DIR, 'nav_mesh_test.txt');
    return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.startsWith('pf ')).map((l) => {
        const n = l.trim().split(/\s+/).slice(1, 7).map(Number);
        return { start: n.slice(0, 3), goal: n.slice(3, 6) };
    });
}

// ---- the tests ----

test('navmesh: nav_test.obj dropped on the page, drawn in 3D; clicks land where the API snaps; both paths drawn are the API\'s', async (t) => {
    const obj = path.join(H.MESH_DIR, 'nav_test.obj');
    if (!fs.existsSync(obj)) {
        if (H.IN_CI) assert.fail(`PATHD_MESH_DIR=${H.MESH_DIR} has no nav_test.obj, and CI must run this test`);
        t.skip(`SKIPPED: no ${obj} (set PATHD_MESH_DIR)`);
        return;
    }
    await dropFiles([{ name: 'nav_test.obj', text: fs.readFileSync(obj, 'utf8') }]);
    await waitFor(() => [...document.querySelectorAll('#map option')].some((o) => o.value === 'nav_test'), null, 'the uploaded level', 60000);
    await pickMap('nav_test');
    const info = await api('GET', '/v1/maps/nav_test');
    const drawn = await V(() => window.pathdViewer.nav.state.mesh.counts);
    assert.equal(drawn.polygons, info.navmesh.polygons, 'every polygon of the map is drawn');
    assert.equal(await page.isVisible('#cv0'), false, 'the grid panes are hidden for a navmesh');
    await shot('navmesh-nav_test.png');

    // RecastDemo's first test case whose ends both snap: the API's snapped
    // points are where the clicks go.
    // A level has floors over floors: of the cases, the first whose two
    // snapped ends are in view (nothing drawn in front of them).
    let tc = null, snapped = null;
    const inView = async (p) => {
        const v = await view(), sc = H.project(v.M, v.w, v.h, p);
        if (!sc || sc[0] < 0 || sc[1] < 0 || sc[0] >= v.w || sc[1] >= v.h) return false;
        const hit = await V(([x, y]) => window.pathdViewer.nav.pickAt(x, y), sc);
        return hit && near(hit.point, p);
    };
    for (const c of testCases()) {
        try {
            const a = await api('POST', '/v1/maps/nav_test/path', { start: c.start, goal: c.goal });
            const ends = [a.path[0], a.path[a.path.length - 1]];
            if (a.found && a.path.length >= 3 && (await inView(ends[0])) && (await inView(ends[1]))) {
                tc = c;
                snapped = ends;
                break;
            }
        } catch { /* off the mesh: try the next */ }
    }
    assert.ok(tc, 'a test case with a path');
    await V(() => { const N = window.pathdViewer.nav.state; N.start = N.goal = null; });
    await page.selectOption('#n_mode', 'path');
    await clickWorld(snapped[0]);
    await waitFor(() => window.pathdViewer.nav.state.start, null, 'the start');
    await clickWorld(snapped[1]);
    await waitFor(() => { const A = window.pathdViewer.nav.state.answers; return A.polyanya && A.detour; }, null, 'both answers');
    const st = await V(() => { const N = window.pathdViewer.nav.state; return { start: N.start, goal: N.goal, answers: N.answers }; });
    // A click lands on the surface point the API snaps to.
    assert.ok(near(st.start, snapped[0]), `start picked ${st.start}, the API snapped ${snapped[0]}`);
    assert.ok(near(st.goal, snapped[1]), `goal picked ${st.goal}, the API snapped ${snapped[1]}`);
    for (const a of ['polyanya', 'detour']) {
        const p = st.answers[a].path;
        // The API snaps the picked point to the ground: the test case's start.
        assert.ok(near(p[0], snapped[0]), `${a}: the picked start snaps to the test case's (${p[0]}, ${snapped[0]})`);
    }
    const poly = await checkDrawnPath('nav_test', 'polyanya', isRed);
    const det = await checkDrawnPath('nav_test', 'detour', isBlue);
    assert.ok(poly.length <= det.length + 1e-3, `polyanya ${poly.length} <= detour ${det.length}`);
    // Side by side: both stats shown.
    for (const [a, r] of [['polyanya', poly], ['detour', det]]) {
        const txt = await page.textContent('#n_stats_' + a);
        assert.ok(txt.includes('length ' + r.length.toFixed(3)) && txt.includes('expanded') && txt.includes(' us'), `${a}: ${txt}`);
    }
    await drawNow();
    await shot('navmesh-path.png');
    // The corridors on request: the polygons the API names, drawn.
    await setChecked('n_corridor', true);
    await waitFor(() => { const A = window.pathdViewer.nav.state.answers; return A.polyanya && A.polyanya.corridor; }, null, 'corridors');
    const cor = await V(() => window.pathdViewer.nav.state.answers.polyanya.corridor);
    const ref = await api('POST', '/v1/maps/nav_test/path', { start: st.start, goal: st.goal, corridor: true });
    assert.deepEqual(cor, ref.corridor);
    await drawNow();
    await shot('navmesh-corridor.png');
    await setChecked('n_corridor', false);
    // Unchecked, the paths are asked again without corridors.
    await waitFor(() => { const A = window.pathdViewer.nav.state.answers; return A.polyanya && A.detour && !A.polyanya.corridor; },
        null, 'the answers without corridors');
    // Top down.
    await page.selectOption('#n_view', 'top');
    await drawNow();
    await checkDrawnPath('nav_test', 'polyanya', isRed);
    await shot('navmesh-top.png');
    await page.selectOption('#n_view', 'orbit');
});

test('navmesh: the agent type chosen on the page is the mesh drawn and the paths asked', async () => {
    await api('PUT', '/v1/maps/agents?agent_radius=0.4&tile_size=48&agent_types=big:1.2,2,0.9,45', H.multiFloorLevel(), 'model/obj');
    await page.click('#reload');
    await waitFor(() => [...document.querySelectorAll('#map option')].some((o) => o.value === 'agents'), null, 'the map listed');
    await pickMap('agents');
    const info = await api('GET', '/v1/maps/agents');
    const offered = await page.$$eval('#n_agent option', (os) => os.map((o) => o.value));
    assert.deepEqual(offered, info.navmesh.agent_types.map((t) => t.id), 'the choice lists the map\'s agent types');
    assert.deepEqual(offered, ['default', 'big']);
    const meshOf = async (type) => api('GET', `/v1/maps/agents/mesh?agent_type=${type}`);
    const drawn = () => V(() => { const N = window.pathdViewer.nav.state;
        return { type: N.mesh.agent_type, polys: N.mesh.tiles.map((t) => t.polygons), tris: N.surf.idx.length / 3 }; });
    const [mDefault, mBig] = [await meshOf('default'), await meshOf('big')];
    const d0 = await drawn();
    assert.equal(d0.type, 'default');
    assert.deepEqual(d0.polys, mDefault.tiles.map((t) => t.polygons), 'the default type\'s polygons are drawn');
    await V(() => { const N = window.pathdViewer.nav.state; N.start = N.goal = null; N.answers = {}; N.cam.mode = 'top'; });
    await page.selectOption('#n_view', 'top');
    await drawNow();
    const before_ = await page.locator('#gl').screenshot();
    await page.selectOption('#n_agent', 'big');
    await waitFor(() => window.pathdViewer.nav.state.mesh.agent_type === 'big', null, 'the big type\'s mesh');
    const d1 = await drawn();
    assert.deepEqual(d1.polys, mBig.tiles.map((t) => t.polygons), 'the big type\'s polygons are drawn');
    assert.notDeepEqual(d1.polys, d0.polys, 'the two types\' meshes differ');
    assert.notEqual(d1.tris, d0.tris);
    await drawNow();
    const after_ = await page.locator('#gl').screenshot();
    assert.ok(!before_.equals(after_), 'the drawn mesh changed');
    await shot('navmesh-agent-big.png');
    // A path on the ground floor between two points the big agent reaches:
    // the page asks for the big type, and draws its answer.
    const probe = await api('POST', '/v1/maps/agents/path', { start: [4, 0, 4], goal: [36, 0, 20], agent_type: 'big' });
    assert.ok(probe.found);
    const ends = [probe.path[0], probe.path[probe.path.length - 1]];
    for (const p of ends) await clickWorld(p);
    await waitFor(() => { const A = window.pathdViewer.nav.state.answers; return A.polyanya && A.detour; }, null, 'both answers');
    const ref = await checkDrawnPath('agents', 'polyanya', isRed, { agent_type: 'big' });
    const other = await V(() => { const N = window.pathdViewer.nav.state; return { start: N.start, goal: N.goal }; });
    const dflt = await api('POST', '/v1/maps/agents/path', { start: other.start, goal: other.goal, algorithm: 'polyanya' });
    assert.notDeepEqual(ref.path, dflt.path, 'the default type\'s path would differ');
    await page.selectOption('#n_agent', 'default');
    await waitFor(() => window.pathdViewer.nav.state.mesh.agent_type === 'default', null, 'the default mesh again');
    await page.selectOption('#n_view', 'orbit');
    await V(() => { window.pathdViewer.nav.state.cam.mode = 'orbit'; });
});

test('navmesh: a generated three-storey building, clicks pick the floor in view, a path up two ramps', async () => {
    await api('PUT', '/v1/maps/building?agent_radius=0.4&tile_size=48', H.multiFloorLevel(), 'model/obj');
    await page.click('#reload');
    await waitFor(() => [...document.querySelectorAll('#map option')].some((o) => o.value === 'building'), null, 'the building listed');
    await pickMap('building');
    await setChecked('n_input', true);
    await waitFor(() => window.pathdViewer.nav.state.mesh.input, null, 'the input geometry');
    // From the ground, seen through the light well, to the top floor: up
    // both ramps.
    const probe = await api('POST', '/v1/maps/building/path', { start: [20, 0, 12], goal: [12, 8, 20] });
    assert.ok(probe.found, 'the top floor is reachable from the ground');
    const ends = [probe.path[0], probe.path[probe.path.length - 1]];
    assert.ok(Math.abs(ends[1][1] - 8) < 0.6, `the goal is on the top floor: ${ends[1]}`);
    await V(() => { const N = window.pathdViewer.nav.state; N.start = N.goal = null; N.cam.pitch = 1.2; });
    for (const p of ends) await clickWorld(p);
    await waitFor(() => { const A = window.pathdViewer.nav.state.answers; return A.polyanya && A.detour; }, null, 'both answers');
    const st = await V(() => ({ start: window.pathdViewer.nav.state.start, goal: window.pathdViewer.nav.state.goal }));
    assert.ok(near(st.start, ends[0]) && near(st.goal, ends[1]), `picked ${st.start} ${st.goal}`);
    const r = await checkDrawnPath('building', 'polyanya', isRed);
    const ys = r.path.map((p) => p[1]);
    assert.ok(Math.min(...ys) < 0.6 && Math.max(...ys) > 7.4, `the path climbs: ${ys}`);
    await drawNow();
    await shot('navmesh-building.png');
    await setChecked('n_input', false);
});

test('navmesh: while the camera moves the level is drawn coarse at half resolution, in full when it stops', async () => {
    const lvl = H.terrainLevel(60); // 7,200 input triangles: more than the coarse version keeps
    await api('PUT', '/v1/maps/hills', lvl.text, 'model/obj');
    await page.click('#reload');
    await waitFor(() => [...document.querySelectorAll('#map option')].some((o) => o.value === 'hills'), null, 'the hills listed');
    await pickMap('hills');
    await setChecked('n_input', true);
    await waitFor(() => window.pathdViewer.nav.state.mesh.input, null, 'the input geometry');
    await drawNow();
    const full = await V(() => {
        const nav = window.pathdViewer.nav, N = nav.state, input = N.R.batches.get('input'), surf = N.R.batches.get('surface');
        // The coarse version against the input: as many triangles as the
        // budget at most, and (a surface approximated, not cut away) about
        // the same area.
        const area = (pos, idx) => {
            let a = 0;
            for (let t = 0; t < idx.length; t += 3) {
                const P = (k) => [pos[3 * idx[t + k]], pos[3 * idx[t + k] + 1], pos[3 * idx[t + k] + 2]];
                const [p, q, r] = [P(0), P(1), P(2)], e = q.map((v, i) => v - p[i]), f = r.map((v, i) => v - p[i]);
                a += Math.hypot(e[1] * f[2] - e[2] * f[1], e[2] * f[0] - e[0] * f[2], e[0] * f[1] - e[1] * f[0]) / 2;
            }
            return a;
        };
        const inp = N.mesh.input, pos = new Float32Array(inp.vertices), idx = new Uint32Array(inp.triangles);
        const d = GL3.decimate(pos, new Uint8Array(4 * pos.length / 3), idx, nav.lod.input);
        return { tris: N.R.triangles, w: N.cv.width, h: N.cv.height, ow: N.ov.width, oh: N.ov.height, lod: nav.lod,
            surface: N.mesh.counts.triangles, coarse: input.coarseN / 3, decimated: d.idx.length / 3,
            coarseSurface: (surf.coarse ? surf.coarseN : surf.n) / 3,
            area: area(pos, idx), coarseArea: area(d.pos, d.idx) };
    });
    assert.equal(full.tris, lvl.triangles + full.surface, 'a still camera draws every triangle');
    assert.deepEqual([full.w, full.h], [full.ow, full.oh], 'at full resolution');
    assert.equal(full.coarse, full.decimated);
    assert.ok(full.coarse <= full.lod.input && full.coarse > full.lod.input / 4, `coarse input ${full.coarse} triangles`);
    assert.ok(full.coarseSurface <= Math.min(full.lod.surface, full.surface), `coarse surface ${full.coarseSurface} triangles`);
    assert.ok(Math.abs(full.coarseArea - full.area) < 0.05 * full.area, `coarse area ${full.coarseArea} of ${full.area}`);
    // A click while the camera moves (the canvas at half resolution) picks
    // the point a still camera picks.
    const box = await page.locator('#ov').boundingBox();
    const picks = await V(([x, y]) => {
        const nav = window.pathdViewer.nav, still = nav.pickAt(x, y).point;
        nav.setMoving(true);
        const moving = nav.pickAt(x, y).point, w = nav.state.cv.width;
        nav.setMoving(false);
        return { still, moving, w };
    }, [box.width * 0.4, box.height * 0.6]);
    assert.equal(picks.w, Math.round(full.ow * full.lod.scale));
    assert.deepEqual(picks.moving, picks.still);
    // A drag orbits: the frames drawn while it moves are coarse and at
    // half resolution, the one drawn when it stops is whole.
    await V(() => { window.pathdViewer.nav.state.frameInfo.length = 0; });
    const cx = box.x + box.width / 2, cy = box.y + box.height / 2;
    await page.mouse.move(cx, cy);
    await page.mouse.down();
    for (let i = 1; i <= 8; i++) await page.mouse.move(cx + 15 * i, cy + 3 * i);
    await page.mouse.up();
    const log = await waitFor(() => {
        const f = window.pathdViewer.nav.state.frameInfo;
        return f.length && !f[f.length - 1].moving && !window.pathdViewer.nav.state.moving ? f : null;
    }, null, 'the frame drawn when the camera stops');
    const moving = log.filter((f) => f.moving), last = log[log.length - 1];
    assert.ok(moving.length > 0, 'frames were drawn while the camera moved');
    for (const f of moving) {
        assert.equal(f.triangles, full.coarse + full.coarseSurface, 'coarse while moving');
        assert.deepEqual([f.width, f.height], [Math.round(full.ow * full.lod.scale), Math.round(full.oh * full.lod.scale)]);
    }
    assert.equal(last.triangles, full.tris, 'whole when still');
    assert.deepEqual([last.width, last.height], [full.ow, full.oh]);
    // What the page shows when it stops is the full-detail frame of that
    // camera, not the coarse one.
    const shown = await page.locator('#gl').screenshot();
    await V(() => { const N = window.pathdViewer.nav; N.state.R.draw(N.M(), true); });
    const coarse = await page.locator('#gl').screenshot();
    await V(() => { const N = window.pathdViewer.nav; N.state.R.draw(N.M(), false); });
    const whole = await page.locator('#gl').screenshot();
    assert.ok(shown.equals(whole), 'the frame shown when still is the full-detail one');
    assert.ok(!coarse.equals(whole), 'the coarse frame differs');
    await shot('navmesh-still.png');
    await setChecked('n_input', false);
});

test('crowd: made from the viewer, agents and their target added by clicks, moving between two screenshots', async () => {
    await pickMap('building');
    await page.fill('#n_hz', '20');
    await page.click('#n_crowd_start');
    await waitFor(() => window.pathdViewer.nav.state.crowd && window.pathdViewer.nav.state.crowd.state, null, 'the crowd');
    await page.selectOption('#n_mode', 'agent');
    // On the top floor (what the camera sees of the building).
    const spots = [[4, 8, 20], [8, 8, 20], [12, 8, 20], [8, 8, 3], [12, 8, 3]];
    for (const p of spots) await clickWorld(p);
    await waitFor((n) => window.pathdViewer.nav.state.crowd.state.agents.length === n, spots.length, 'the agents added');
    await page.selectOption('#n_mode', 'target');
    await clickWorld([36, 8, 20]);
    await waitFor(() => window.pathdViewer.nav.state.crowd.state.agents.every((a) => a.target), null, 'every agent has the target');
    const f0 = await V(() => window.pathdViewer.nav.state.crowd.state.frame);
    await waitFor((f) => window.pathdViewer.nav.state.crowd.state.frame >= f + 10, f0, 'ten ticks');
    const s1 = await V(() => { window.pathdViewer.nav.frame(); return window.pathdViewer.nav.state.crowd.state; });
    const img1 = await page.screenshot({ path: path.join(H.ARTIFACTS, 'crowd-1.png') });
    await waitFor((f) => window.pathdViewer.nav.state.crowd.state.frame >= f + 20, s1.frame, 'twenty more ticks');
    // The frame drawn and kept (window.__overlay) with the state it drew:
    // later ticks redraw the canvas.
    const s2 = await V(() => {
        const N = window.pathdViewer.nav.state;
        window.pathdViewer.nav.frame();
        window.__overlay = N.octx.getImageData(0, 0, N.ov.width, N.ov.height);
        window.__overlayM = [...window.pathdViewer.nav.M()];
        return N.crowd.state;
    });
    const img2 = await page.screenshot({ path: path.join(H.ARTIFACTS, 'crowd-2.png') });
    assert.ok(!img1.equals(img2), 'the two screenshots differ');
    let moved = 0;
    for (const a of s2.agents) {
        const before_ = s1.agents.find((x) => x.id === a.id);
        if (before_ && Math.hypot(a.position[0] - before_.position[0], a.position[2] - before_.position[2]) > 0.5) moved++;
    }
    assert.equal(moved, spots.length, 'every agent moved between the screenshots');
    // Drawn where they are: each agent's pixel has a state colour.
    const v = await view();
    v.M = await V(() => window.__overlayM);
    const px = await V((pts) => {
        const d = window.__overlay;
        return pts.map(([x, y]) => { const i = 4 * (Math.round(y) * d.width + Math.round(x)); return [...d.data.slice(i, i + 4)]; });
    }, s2.agents.map((a) => H.project(v.M, v.w, v.h, a.position)));
    for (const c of px) assert.ok(c[3] > 200, `an agent pixel ${c}`);
    const cr = await V(() => ({ gaps: window.pathdViewer.nav.state.crowd.gaps, ws: !!window.pathdViewer.nav.state.crowd.ws }));
    assert.ok(cr.ws, 'the states came over the WebSocket');
    assert.equal(cr.gaps, 0, 'no tick missed');
});

test('obstacle: added by a click, in the map info, walked round by the crowd, removed by a click', async () => {
    await pickMap('building');
    const v0 = (await api('GET', '/v1/maps/building')).version;
    // Across the agents' way along the top floor's z = 20 line.
    const spot = [24, 8, 20];
    await page.fill('#n_obsr', '1.5');
    await page.selectOption('#n_mode', 'obstacle');
    await clickWorld(spot);
    await waitFor((v) => window.pathdViewer.nav.state.version === v + 1, v0, 'the new version');
    const info = await api('GET', '/v1/maps/building');
    assert.equal(info.version, v0 + 1);
    const obs = info.navmesh.obstacles.find((o) => o.cylinder);
    assert.ok(obs, `an obstacle in the map info: ${JSON.stringify(info.navmesh.obstacles)}`);
    assert.ok(Math.hypot(obs.cylinder.base[0] - spot[0], obs.cylinder.base[2] - spot[2]) < 0.1, `at the click: ${obs.cylinder.base}`);
    assert.equal(obs.cylinder.radius, 1.5);
    // Agents sent through it go round: once the crowd's mesh has the
    // obstacle, no agent centre enters its cylinder (counted over ticks).
    await page.selectOption('#n_mode', 'agent');
    for (const p of [[14, 8, 20], [14, 8, 21]]) await clickWorld(p);
    await page.selectOption('#n_mode', 'target');
    await clickWorld([34, 8, 20]);
    const seen = await V(async ([c, r, ver]) => {
        const N = window.pathdViewer.nav.state, inside = [];
        let ticks = 0, last = -1;
        await new Promise((done) => {
            const t = setInterval(() => {
                const s = N.crowd.state;
                if (s.frame === last) return;
                last = s.frame;
                if (s.map_version < ver) return;
                ticks++;
                for (const a of s.agents) if (Math.hypot(a.position[0] - c[0], a.position[2] - c[2]) < r) inside.push([s.frame, a.id, a.position]);
                if (ticks >= 60) { clearInterval(t); done(); }
            }, 5);
        });
        return { ticks, inside, agents: N.crowd.state.agents.map((a) => a.position) };
    }, [spot, obs.cylinder.radius, info.version]);
    assert.equal(seen.inside.length, 0, `agents inside the obstacle: ${JSON.stringify(seen.inside.slice(0, 3))}`);
    await drawNow();
    await shot('obstacle-added.png');
    // A click on it removes it.
    await page.selectOption('#n_mode', 'obstacle');
    await clickWorld([spot[0] + 0.3, 8, spot[2]]);
    await waitFor((v) => window.pathdViewer.nav.state.version === v + 2, v0, 'the version without it');
    assert.equal((await api('GET', '/v1/maps/building')).navmesh.obstacles.length, 0);
    await drawNow();
    await shot('obstacle-removed.png');
    await page.click('#n_crowd_end');
});

test('crowd: 1,000 agents animate at 20 Hz with every tick received and drawn', async () => {
    await pickMap('building');
    await page.fill('#n_maxagents', '1000');
    await page.fill('#n_hz', '20');
    await page.click('#n_crowd_start');
    await waitFor(() => window.pathdViewer.nav.state.crowd && window.pathdViewer.nav.state.crowd.state, null, 'the crowd');
    // 1,000 agents on the ground floor in a seeded scatter, targets across.
    let s = 7;
    const rnd = () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 4294967296; };
    const add = [];
    for (let i = 0; i < 1000; i++) {
        // Clear of the first ramp (x 34..38), which has no ground under it.
        const x = 1 + rnd() * 30, z = rnd() < 0.5 ? 17 + rnd() * 6 : 1 + rnd() * 6;
        add.push({ position: [x, 0, z], target: [31 - x, 0, z < 12 ? z + 16 : z - 16] });
    }
    // Added by "the game server" through the API; the viewer watches.
    const cid = await V(() => window.pathdViewer.nav.state.crowd.id);
    for (let k = 0; k < add.length; k += 250)
        await api('POST', `/v1/maps/building/crowds/${cid}/step`, { add: add.slice(k, k + 250) });
    await waitFor(() => window.pathdViewer.nav.state.crowd.state.agents.length >= 990, null, 'the agents');
    const n = await V(() => window.pathdViewer.nav.state.crowd.state.agents.length);
    // From here, 100 ticks: every frame number arrives once, in order.
    const r0 = await V(() => { const c = window.pathdViewer.nav.state.crowd; return { received: c.received, gaps: c.gaps, frame: c.lastFrame, drawn: window.pathdViewer.nav.state.frames.length }; });
    await waitFor((f) => window.pathdViewer.nav.state.crowd.lastFrame >= f + 100, r0.frame, '100 ticks', 120000);
    const r1 = await V(() => { const c = window.pathdViewer.nav.state.crowd; return { received: c.received, gaps: c.gaps, frame: c.lastFrame }; });
    const sent = r1.frame - r0.frame, received = r1.received - r0.received;
    console.log(`1,000-agent crowd (${n} agents, 20 Hz): ${sent} ticks sent, ${received} received, ${r1.gaps - r0.gaps} missed`);
    assert.equal(r1.gaps, 0, 'no tick missed');
    assert.equal(received, sent, 'every tick sent was received');
    const server = await api('GET', `/v1/maps/building/crowds/${await V(() => window.pathdViewer.nav.state.crowd.id)}`);
    assert.ok(server.frame >= r1.frame, 'the server is at or past the last frame received');
    await drawNow();
    await shot('crowd-1000.png');
    await page.click('#n_crowd_end');
});

// ---- behind a proxy, below a prefix ----

const freePort = () => new Promise((resolve, reject) => {
    const srv_ = net.createServer();
    srv_.on('error', reject);
    srv_.listen(0, '127.0.0.1', () => { const { port } = srv_.address(); srv_.close(() => resolve(port)); });
});

function nginxBin() {
    for (const p of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (fs.existsSync(p)) return p;
    return null;
}

test('proxy: the page below nginx\'s /pathd/ prefix loads maps, the mesh, paths and a crowd stream', async (t) => {
    const bin = nginxBin();
    if (!bin) {
        if (H.IN_CI) assert.fail('nginx is missing (make fleet-deps installs it), and CI must run this test');
        t.skip('SKIPPED: no nginx (make fleet-deps installs it)');
        return;
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pathd-nginx-'));
    const port = await freePort(), up = new URL(srv.url).port;
    fs.writeFileSync(path.join(dir, 'nginx.conf'), `events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
    map $http_upgrade $connection_upgrade { default upgrade; '' ''; }
    server {
        listen 127.0.0.1:${port};
        client_max_body_size 64m;
        location /pathd/ {
            proxy_pass http://127.0.0.1:${up}/;
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
        }
    }
}
`);
    const ng = spawn(bin, ['-p', dir, '-e', path.join(dir, 'error.log'), '-c', path.join(dir, 'nginx.conf'),
        '-g', `daemon off; master_process on; worker_processes 1; pid ${dir}/nginx.pid;`], { stdio: 'ignore' });
    try {
        const base = `http://127.0.0.1:${port}/pathd/`;
        for (let i = 0; ; i++) {
            try { if ((await fetch(base + 'readyz')).ok) break; } catch { /* not yet */ }
            if (i > 400) throw new Error('nginx never answered: ' + fs.readFileSync(path.join(dir, 'error.log'), 'utf8'));
            await new Promise((r) => setTimeout(r, 25));
        }
        await page.goto(base);
        await waitFor(() => [...document.querySelectorAll('#map option')].some((o) => o.value === 'building'), null, 'the maps through the proxy');
        await pickMap('building');
        await V(() => { const N = window.pathdViewer.nav.state; N.start = N.goal = null; });
        await page.selectOption('#n_mode', 'path');
        for (const p of [[20, 0, 12], [30, 8, 20]]) await clickWorld(p);
        await waitFor(() => { const A = window.pathdViewer.nav.state.answers; return A.polyanya && A.polyanya.path; }, null, 'a path through the proxy');
        await page.fill('#n_hz', '20');
        await page.click('#n_crowd_start');
        await waitFor(() => window.pathdViewer.nav.state.crowd && window.pathdViewer.nav.state.crowd.state, null, 'the crowd');
        await page.selectOption('#n_mode', 'agent');
        await clickWorld([10, 8, 20]);
        await waitFor(() => { const c = window.pathdViewer.nav.state.crowd; return c.ws && c.received >= 20; }, null, 'twenty ticks streamed through the proxy');
        const cr = await V(() => { const c = window.pathdViewer.nav.state.crowd; return { gaps: c.gaps, url: c.ws.url }; });
        assert.ok(cr.url.startsWith(`ws://127.0.0.1:${port}/pathd/v1/maps/building/crowds/`), cr.url);
        assert.equal(cr.gaps, 0);
        await drawNow();
        await shot('navmesh-proxy.png');
        await page.click('#n_crowd_end');
    } finally {
        const done = new Promise((r) => ng.once('exit', r));
        ng.kill('SIGTERM');
        await done;
        fs.rmSync(dir, { recursive: true, force: true });
    }
});
