// viewer_graph.js -- waypoint graph worlds in the viewer: the nodes and
// edges of GET v1/maps/{id}/graph (one-way edges with arrows, disabled
// nodes and edges drawn as such), click-to-query paths (POST .../path with
// the clicked points, which the server snaps to the nearest enabled node:
// the answer's start/goal say which and how far), and edges or nodes
// switched off and on by click (PATCH v1/maps/{id}); with "sessions' plans"
// the map's live sessions (GET .../sessions, then each one's current
// answer, every half second) are drawn: each plan from its agent's node to
// its goal. Inlined into the page
// by the Makefile after viewer_gl.js; uses the page's api(), say(), fail()
// and $().
//
// Positions: a 2D graph's [x, y] is drawn on the ground plane as world
// [x, 0, y] (y down the screen in the top-down view, as a grid's rows); a
// 3D graph's [x, y, z] as it is, y up (Recast's convention, so a graph made
// over a navmesh level lines up with it). The camera is viewer_gl.js's
// (top down for 2D, orbit for 3D); everything is drawn on one 2D canvas,
// projected by its matrix, so a frame costs a few operations a visible
// edge and nothing is drawn when nothing changed.
"use strict";

const GRAPH = (() => {
  const RGB = {
    edge: "rgb(170,180,200)", oneway: "rgb(90,200,255)", disabled: "rgb(220,60,60)",
    node: "rgb(240,240,240)", nodeOff: "rgb(220,60,60)", path: "rgb(255,200,0)",
    start: "rgb(60,230,90)", goal: "rgb(255,80,200)", click: "rgb(255,255,255)", plan: "rgb(0,220,180)",
  };
  const PLANS_MAX = 50, PLANS_MS = 500; // sessions drawn at most, and how often they are read
  const G = {
    id: null, version: 0, data: null, info: null,
    dim: 2, pos: null,      // world positions, 3 floats a node
    index: null,            // node id text -> index
    cam: GL3.camera(),
    cv: null, ctx: null,
    start: null, goal: null, // clicked world points
    answer: null, error: null,
    mode: "path",           // what a click does: path, edge, node
    frames: [],
    drawn: null,            // for tests: what the last frame drew where
    plans: [],              // live sessions' answers: {session_id, path, points, position, goal}
    plansTimer: 0,
  };
  const show = (id) => $(id) && $(id).checked;
  const url = () => "v1/maps/" + encodeURIComponent(G.id);

  // A graph position -> world [x, y, z] (y up).
  const world = (p) => (p.length === 2 ? [p[0], 0, p[1]] : [p[0], p[1], p[2]]);
  const nodePos = (i) => [G.pos[3 * i], G.pos[3 * i + 1], G.pos[3 * i + 2]];

  async function open(id) {
    G.id = id;
    G.plans = [];
    G.start = G.goal = null;
    G.answer = null;
    G.error = null;
    $("g_stats").textContent = "-"; // the last map's answer is not this one's
    $("g_stats").className = "stats";
    await load(true);
    watchPlans();
  }

  async function load(fresh) {
    const want = G.id;
    say("loading the graph of '" + want + "'...");
    const [data, info] = await Promise.all([api("GET", url() + "/graph"), api("GET", url())]);
    if (G.id !== want) return;
    G.data = data;
    G.info = info;
    G.version = data.version;
    G.dim = data.dimensions;
    for (const o of $("map").options) // the list's label follows the version drawn
      if (o.value === want) o.text = o.text.replace(/, v\d+\)$/, ", v" + data.version + ")");
    G.pos = new Float64Array(3 * data.nodes.length);
    G.index = new Map();
    data.nodes.forEach((n, i) => {
      const w = world(n.position);
      G.pos.set(w, 3 * i);
      G.index.set(String(n.id), i);
    });
    if (fresh) {
      G.cam.mode = G.dim === 2 ? "top" : "orbit";
      $("g_view").value = G.cam.mode;
      fit();
    }
    describe();
    say("'" + want + "' v" + data.version + ": " + data.nodes.length + " nodes, " + data.edges.length + " edges");
    schedule();
  }

  function describe() {
    const g = G.info.graph || {}, lines = [];
    lines.push("version " + G.version + ", " + G.dim + "D");
    lines.push(g.nodes + " nodes, " + g.edges + " edges (" + g.arcs + " arcs), most arcs from a node " + g.max_degree);
    lines.push("disabled: " + g.disabled_nodes + " nodes, " + g.disabled_edges + " edges");
    lines.push("one-way edges " + G.data.edges.filter((e) => e.oneway).length);
    $("g_info").textContent = lines.join("\n");
  }

  // ---- the camera ----
  function fit() {
    const n = G.pos ? G.pos.length / 3 : 0;
    if (!n) return;
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (let i = 0; i < n; i++)
      for (let k = 0; k < 3; k++) { lo[k] = Math.min(lo[k], G.pos[3 * i + k]); hi[k] = Math.max(hi[k], G.pos[3 * i + k]); }
    const span = Math.max(hi[0] - lo[0], hi[2] - lo[2], hi[1] - lo[1], 1);
    Object.assign(G.cam, { target: [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2],
                           dist: span * 1.4, span: span * 1.15 });
    schedule();
  }
  const M = () => GL3.viewProj(G.cam, G.cv.width, G.cv.height);

  let queued = false;
  function schedule() {
    if (queued || !G.cv) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; frame(); });
  }

  // ---- drawing ----
  function arrow(c, a, b, rgb) {
    const dx = b[0] - a[0], dy = b[1] - a[1], l = Math.hypot(dx, dy);
    if (l < 12) return;
    const ux = dx / l, uy = dy / l, tx = a[0] + dx * 0.6, ty = a[1] + dy * 0.6, s = 7;
    c.fillStyle = rgb;
    c.beginPath();
    c.moveTo(tx + ux * s, ty + uy * s);
    c.lineTo(tx - ux * s - uy * s * 0.6, ty - uy * s + ux * s * 0.6);
    c.lineTo(tx - ux * s + uy * s * 0.6, ty - uy * s - ux * s * 0.6);
    c.closePath();
    c.fill();
  }

  // One frame; returns its time in ms.
  function frame() {
    if (!G.cv || !G.data || !G.id) return 0;
    const t0 = performance.now(), m = M(), c = G.ctx, w = G.cv.width, h = G.cv.height;
    const n = G.pos.length / 3, scr = new Float64Array(2 * n), vis = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const p = GL3.project(m, w, h, nodePos(i));
      if (p) { scr[2 * i] = p[0]; scr[2 * i + 1] = p[1]; vis[i] = 1; }
    }
    c.fillStyle = "#22242b";
    c.fillRect(0, 0, w, h);
    const nodeOff = G.data.nodes.map((x) => x.enabled === false);
    // Edges: enabled two-way, one-way (with an arrow towards `to`), disabled (dashed).
    const E = G.data.edges, ends = new Int32Array(2 * E.length);
    E.forEach((e, k) => { ends[2 * k] = G.index.get(String(e.from)); ends[2 * k + 1] = G.index.get(String(e.to)); });
    for (const pass of ["edge", "oneway", "disabled"]) {
      c.strokeStyle = RGB[pass];
      c.lineWidth = 2;
      c.setLineDash(pass === "disabled" ? [7, 4] : []);
      c.beginPath();
      for (let k = 0; k < E.length; k++) {
        const e = E[k], a = ends[2 * k], b = ends[2 * k + 1];
        const kind = e.enabled === false ? "disabled" : e.oneway ? "oneway" : "edge";
        if (kind !== pass || !vis[a] || !vis[b]) continue;
        c.moveTo(scr[2 * a], scr[2 * a + 1]);
        c.lineTo(scr[2 * b], scr[2 * b + 1]);
      }
      c.stroke();
      if (pass !== "edge")
        for (let k = 0; k < E.length; k++) {
          const e = E[k], a = ends[2 * k], b = ends[2 * k + 1];
          if (!e.oneway || (e.enabled === false) !== (pass === "disabled") || !vis[a] || !vis[b]) continue;
          arrow(c, [scr[2 * a], scr[2 * a + 1]], [scr[2 * b], scr[2 * b + 1]], RGB[pass]);
        }
    }
    c.setLineDash([]);
    // Nodes: discs, disabled ones red with a cross.
    const r = n > 5000 ? 1.5 : 3.5;
    for (const off of [false, true]) {
      c.fillStyle = off ? RGB.nodeOff : RGB.node;
      c.beginPath();
      for (let i = 0; i < n; i++) {
        if (!vis[i] || nodeOff[i] !== off) continue;
        c.moveTo(scr[2 * i] + r, scr[2 * i + 1]);
        c.arc(scr[2 * i], scr[2 * i + 1], r, 0, 2 * Math.PI);
      }
      c.fill();
    }
    if (show("g_labels") && n <= 400) {
      c.fillStyle = "#ddd";
      c.font = "11px system-ui, sans-serif";
      for (let i = 0; i < n; i++) if (vis[i]) c.fillText(String(G.data.nodes[i].id), scr[2 * i] + 5, scr[2 * i + 1] - 5);
    }
    // The live sessions' plans (under the clicked path), their agents' nodes as discs.
    G.drawn = { path: null, start: null, goal: null, plans: [] };
    for (const pl of G.plans) {
      const pts = pl.points.map((p) => GL3.project(m, w, h, world(p)));
      c.strokeStyle = RGB.plan;
      c.fillStyle = RGB.plan;
      c.lineWidth = 3;
      c.beginPath();
      pts.forEach((p, i) => { if (p) (i ? c.lineTo(p[0], p[1]) : c.moveTo(p[0], p[1])); });
      c.stroke();
      if (pts[0]) { c.beginPath(); c.arc(pts[0][0], pts[0][1], 6, 0, 2 * Math.PI); c.fill(); }
      G.drawn.plans.push({ session_id: pl.session_id, points: pts });
    }
    // The path and its ends.
    const a = G.answer;
    if (a && a.points && a.points.length) {
      const pts = a.points.map((p) => GL3.project(m, w, h, world(p)));
      c.strokeStyle = RGB.path;
      c.lineWidth = 4;
      c.beginPath();
      pts.forEach((p, i) => { if (p) (i ? c.lineTo(p[0], p[1]) : c.moveTo(p[0], p[1])); });
      c.stroke();
      G.drawn.path = pts;
    }
    const ring = (p, rgb, rad) => {
      c.strokeStyle = rgb;
      c.lineWidth = 2.5;
      c.beginPath();
      c.arc(p[0], p[1], rad, 0, 2 * Math.PI);
      c.stroke();
    };
    const cross = (p) => {
      c.strokeStyle = RGB.click;
      c.lineWidth = 1.5;
      c.beginPath();
      c.moveTo(p[0] - 5, p[1] - 5); c.lineTo(p[0] + 5, p[1] + 5);
      c.moveTo(p[0] - 5, p[1] + 5); c.lineTo(p[0] + 5, p[1] - 5);
      c.stroke();
    };
    for (const end of ["start", "goal"]) {
      const clicked = G[end] && GL3.project(m, w, h, G[end]);
      if (clicked) cross(clicked);
      const s = a && a[end];
      const i = s ? G.index.get(String(s.node)) : undefined;
      if (i === undefined || !vis[i]) continue;
      const p = [scr[2 * i], scr[2 * i + 1]];
      ring(p, RGB[end], 9);
      if (clicked && s.snapped) { // the snap: from the click to its node
        c.strokeStyle = RGB.click;
        c.lineWidth = 1;
        c.setLineDash([3, 3]);
        c.beginPath(); c.moveTo(clicked[0], clicked[1]); c.lineTo(p[0], p[1]); c.stroke();
        c.setLineDash([]);
      }
      G.drawn[end] = { node: s.node, at: p };
    }
    const ms = performance.now() - t0;
    G.frames.push(ms);
    if (G.frames.length > 240) G.frames.shift();
    $("g_frame").textContent = n + " nodes, " + E.length + " edges, frame " + ms.toFixed(1) + " ms";
    return ms;
  }

  // ---- clicks ----
  // The world point under canvas pixel (x, y): in 3D the node drawn
  // nearest the cursor within 14 px (its position), else (and always in
  // 2D) where the cursor's ray meets the horizontal plane through the
  // camera's target.
  function pointAt(x, y) {
    const m = M(), w = G.cv.width, h = G.cv.height;
    if (G.dim === 3) {
      const i = nodeNear(x, y, 14);
      if (i >= 0) return nodePos(i);
    }
    const r = GL3.ray(m, w, h, x, y), y0 = G.dim === 2 ? 0 : G.cam.target[1];
    if (Math.abs(r.d[1]) < 1e-9) return null;
    const t = (y0 - r.o[1]) / r.d[1];
    if (t < 0) return null;
    return [r.o[0] + r.d[0] * t, y0, r.o[2] + r.d[2] * t];
  }
  // The node drawn nearest (x, y) within `px` pixels, or -1.
  function nodeNear(x, y, px) {
    const m = M(), w = G.cv.width, h = G.cv.height, n = G.pos.length / 3;
    let best = -1, bd = px * px;
    for (let i = 0; i < n; i++) {
      const p = GL3.project(m, w, h, nodePos(i));
      if (!p) continue;
      const d = (p[0] - x) ** 2 + (p[1] - y) ** 2;
      if (d < bd) { bd = d; best = i; }
    }
    return best;
  }
  // The edge drawn nearest (x, y) within `px` pixels, or -1.
  function edgeNear(x, y, px) {
    const m = M(), w = G.cv.width, h = G.cv.height;
    let best = -1, bd = px;
    G.data.edges.forEach((e, k) => {
      const a = GL3.project(m, w, h, nodePos(G.index.get(String(e.from))));
      const b = GL3.project(m, w, h, nodePos(G.index.get(String(e.to))));
      if (!a || !b) return;
      const dx = b[0] - a[0], dy = b[1] - a[1], l2 = dx * dx + dy * dy || 1;
      const t = Math.max(0, Math.min(1, ((x - a[0]) * dx + (y - a[1]) * dy) / l2));
      const d = Math.hypot(a[0] + t * dx - x, a[1] + t * dy - y);
      if (d < bd) { bd = d; best = k; }
    });
    return best;
  }
  // A world point as the graph's position ([x, y] for a 2D graph).
  const graphPoint = (p) => (G.dim === 2 ? [p[0], p[2]] : p).map((v) => Math.round(v * 1e6) / 1e6);

  async function click(x, y) {
    if (!G.data) return;
    if (G.mode === "edge" || G.mode === "node") {
      const k = G.mode === "edge" ? edgeNear(x, y, 8) : nodeNear(x, y, 10);
      if (k < 0) { say("no " + G.mode + " under the cursor"); return; }
      await toggle(G.mode, k);
      return;
    }
    const p = pointAt(x, y);
    if (!p) { say("nothing under the cursor"); return; }
    if (!G.start || G.goal) {
      G.start = p; G.goal = null; G.answer = null; G.error = null;
      say("start " + fmt(graphPoint(p)) + "; now click a goal");
      schedule();
      return;
    }
    G.goal = p;
    await query();
  }
  const fmt = (p) => "[" + p.map((v) => (+v).toFixed(2)).join(", ") + "]";

  async function query() {
    if (!G.start || !G.goal) return;
    const body = { start: { point: graphPoint(G.start) }, goal: { point: graphPoint(G.goal) },
                   algorithm: $("g_algo").value, cache: false };
    const box = $("g_stats");
    try {
      G.answer = await api("POST", url() + "/path", body);
      G.error = null;
      const j = G.answer, st = (s) => s.node + (s.snapped ? " (snapped " + (+s.distance).toFixed(3) + " away)" : "");
      box.className = "stats";
      box.textContent = j.algorithm + ": " + (j.found ? "found" : "not found" + (j.reason ? " (" + j.reason + ")" : "")) +
        "\ncost " + (j.cost !== undefined ? (+j.cost).toFixed(3) : "-") +
        "\nexpanded " + j.stats.expanded + ", time " + j.stats.time_us + " us" + (j.stats.cached ? " (cached)" : "") +
        "\nnodes " + (j.path ? j.path.length : 0) + ", edges " + (j.edges ? j.edges.length : 0) +
        "\nstart " + st(j.start) + "\ngoal " + st(j.goal);
    } catch (e) {
      G.answer = null;
      G.error = e.message;
      box.className = "stats err";
      box.textContent = e.message;
    }
    schedule();
  }

  // Switches edge or node k off (or back on) for everyone: a PATCH, then
  // the new version is drawn and the path asked again.
  async function toggle(what, k) {
    let body;
    if (what === "edge") {
      const e = G.data.edges[k];
      body = { edges: [{ index: k, enabled: e.enabled === false }] };
    } else {
      const n = G.data.nodes[k];
      body = { nodes: [{ id: String(n.id), enabled: n.enabled === false }] };
    }
    const j = await api("PATCH", url(), body);
    say(what + " " + (what === "edge" ? k : G.data.nodes[k].id) + (body[what + "s"][0].enabled ? " on" : " off") +
        ": version " + j.version);
    await load(false);
    await query();
  }

  // ---- live sessions' plans ----
  // Reads the map's sessions (the first PLANS_MAX) and each one's current
  // answer; a session ended meanwhile (404) is left out.
  async function readPlans() {
    const want = G.id;
    const list = await api("GET", url() + "/sessions?limit=" + PLANS_MAX);
    const got = await Promise.all(list.sessions.map((x) =>
      api("GET", url() + "/sessions/" + encodeURIComponent(x.session_id)).catch((e) => (e.status === 404 ? null : Promise.reject(e)))));
    if (G.id !== want || !show("g_sessions")) return;
    G.plans = got.filter((a) => a && a.points);
    $("g_plans").textContent = G.plans.length ? G.plans.length + " sessions: " +
      G.plans.map((a) => a.session_id.slice(0, 8) + " " + a.position + " -> " + a.goal + " cost " + (+a.cost).toFixed(2)).join("; ") : "no sessions";
    schedule();
  }
  function watchPlans() {
    clearTimeout(G.plansTimer);
    if (!show("g_sessions") || !G.id) { G.plans = []; $("g_plans").textContent = ""; schedule(); return; }
    readPlans().catch(fail).finally(() => { if (show("g_sessions")) G.plansTimer = setTimeout(watchPlans, PLANS_MS); });
  }

  // ---- set up ----
  function init() {
    G.cv = $("gcv");
    G.ctx = G.cv.getContext("2d");
    let down = null;
    const cv = G.cv;
    cv.addEventListener("pointerdown", (ev) => { down = { x: ev.clientX, y: ev.clientY, moved: false, b: ev.button, shift: ev.shiftKey }; cv.setPointerCapture(ev.pointerId); });
    cv.addEventListener("pointermove", (ev) => {
      if (!down) return;
      const dx = ev.clientX - down.x, dy = ev.clientY - down.y;
      if (!down.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      down.moved = true;
      const cam = G.cam;
      if (down.b === 2 || down.shift || cam.mode === "top") {
        const scale = (cam.mode === "top" ? cam.span : cam.dist) / cv.height;
        const cy = Math.cos(cam.yaw), sy = Math.sin(cam.yaw);
        if (cam.mode === "top") { cam.target[0] -= dx * scale; cam.target[2] -= dy * scale; }
        else { cam.target[0] -= (dx * cy - dy * sy) * scale; cam.target[2] -= (-dx * sy - dy * cy) * scale; }
      } else {
        cam.yaw -= dx * 0.008;
        cam.pitch = Math.max(0.05, Math.min(1.55, cam.pitch + dy * 0.008));
      }
      down.x = ev.clientX;
      down.y = ev.clientY;
      schedule();
    });
    cv.addEventListener("pointerup", (ev) => {
      const d = down;
      down = null;
      if (!d || d.moved || d.b !== 0) return;
      const r = cv.getBoundingClientRect();
      click(ev.clientX - r.left - cv.clientLeft, ev.clientY - r.top - cv.clientTop).catch(fail);
    });
    cv.addEventListener("contextmenu", (ev) => ev.preventDefault());
    cv.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const f = Math.pow(1.0015, ev.deltaY);
      G.cam.dist *= f;
      G.cam.span *= f;
      schedule();
    }, { passive: false });
    $("g_view").onchange = () => { G.cam.mode = $("g_view").value; schedule(); };
    $("g_mode").onchange = () => { G.mode = $("g_mode").value; };
    $("g_algo").onchange = () => query().catch(fail);
    $("g_labels").onchange = schedule;
    $("g_sessions").onchange = watchPlans;
    $("g_fit").onclick = fit;
    $("g_reload").onclick = () => load(false).then(query).catch(fail);
  }

  function resize(w, h) {
    if (!G.cv) return;
    G.cv.width = w;
    G.cv.height = h;
    schedule();
  }

  return { state: G, init, open, load, resize, frame, fit, click, query, toggle, M, world, schedule, readPlans,
           close: () => { G.id = null; G.plans = []; clearTimeout(G.plansTimer); } };
})();
