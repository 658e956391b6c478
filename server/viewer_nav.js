// viewer_nav.js -- navmesh worlds in the viewer: the level in 3D (GET
// v1/maps/{id}/mesh), click-to-query paths of both algorithms, live crowds
// over their WebSocket, obstacles added and removed by click (PATCH).
// Inlined into the page by the Makefile after viewer_gl.js; uses the
// page's api(), say(), fail() and $().
//
// Drawing: the static level (surface triangles by tile and area, heights
// shaded; polygon edges and walls; optionally the input geometry, tile
// bounds, named areas, obstacles, off-mesh links) is built once per map
// version into WebGL batches; a frame draws them with the camera and then
// paints the live parts (paths, markers, agents and their velocity
// arrows) on a 2D canvas laid over it, projected by the same matrix.
// Clicking casts a ray against the surface triangles (GL3.pick).
"use strict";

const NAV = (() => {
  const ALGOS = ["polyanya", "detour"];
  const PATH_RGB = { polyanya: "#ff2a2a", detour: "#2a8cff" };
  const STATE_RGB = { idle: "#bbbbbb", moving: "#2ee66b", planning: "#ffd23f", arrived: "#4fc3ff",
                      partial: "#ff9f1c", failed: "#ff3b3b", off_mesh: "#ff00ff" };
  const N = {
    id: null, version: 0, mesh: null, info: null,
    surf: null,          // {pos, idx, poly} flat surface for picking: positions, triangles, triangle -> "tile:poly"
    bounds: null,
    cam: GL3.camera(),
    R: null, cv: null, ov: null, octx: null,
    start: null, goal: null,
    answers: {},         // algorithm -> answer or {error}
    picked: null,        // the last picked surface point
    mode: "path",        // what a click does: path, agent, target, obstacle
    crowd: null,         // {id, url, state, ws, ticksSent, frames: [], gaps, received}
    frames: [],          // the last frames' times, ms
    frameInfo: [],       // and what they drew: {moving, triangles, width, height}
    obstacleSeq: 0,
    loading: null,
    moving: false,       // the camera is moving: coarse batches are drawn
    stillTimer: 0,
    agentType: "default", // whose mesh is drawn and whose paths are asked (info's agent_types)
  };
  const show = (id) => $(id) && $(id).checked;
  // Level of detail: while the camera moves (a drag, the wheel, and for
  // STILL_MS after) the input geometry is drawn with at most LOD_INPUT
  // triangles and the surface with at most LOD_SURFACE (GL3.decimate),
  // at MOVING_SCALE of the canvas's resolution (the page stretches it);
  // the frame after it stops draws everything at full resolution.
  // Software WebGL spends about a microsecond a triangle and a few
  // nanoseconds a pixel (docs/viewer.md).
  const LOD_INPUT = 1500, LOD_SURFACE = 2000, STILL_MS = 250, MOVING_SCALE = 0.5;

  // ---- colours ----
  function areaRGB(area) {
    if (area === 63) return [0, 172, 230];
    const h = (area * 47) % 360, s = 0.55, l = 0.55; // one hue an area id
    const k = (n) => (n + h / 30) % 12, a = s * Math.min(l, 1 - l);
    const f = (n) => l - a * Math.max(-1, Math.min(k(n) - 3, 9 - k(n), 1));
    return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)];
  }
  const tileShade = (t) => 0.9 + 0.1 * (((t.x * 73856093) ^ (t.z * 19349663) ^ (t.layer * 83492791)) & 3) / 3;

  // ---- loading a map ----
  async function open(id) {
    N.id = id;
    N.start = N.goal = null;
    N.answers = {};
    await endCrowd();
    await load(true);
  }

  async function load(fresh) {
    const want = N.id;
    const asked = N.agentType;
    const q = "?triangles=true" + (show("n_input") ? "&input=true" : "") +
      "&agent_type=" + encodeURIComponent(asked);
    say("loading the mesh of '" + want + "'...");
    let mesh, info;
    try {
      [mesh, info] = await Promise.all([
        api("GET", "v1/maps/" + encodeURIComponent(want) + "/mesh" + q),
        api("GET", "v1/maps/" + encodeURIComponent(want)),
      ]);
    } catch (e) {
      if (e.status !== 422 || asked === "default") throw e;
      N.agentType = "default"; // a type this version does not have
      return load(fresh);
    }
    if (N.id !== want) return;
    N.info = info;
    agentTypes();
    if (N.agentType !== asked) return load(fresh); // the type went away: the default's mesh
    N.mesh = mesh;
    N.version = mesh.version;
    N.refs = new Map();
    buildLevel();
    if (fresh) fit();
    describe();
    say("'" + want + "' v" + mesh.version + ": " + mesh.counts.polygons + " polygons, " +
        mesh.counts.triangles + " surface triangles in " + mesh.counts.tiles + " tiles" +
        (mesh.input ? ", input " + mesh.input.triangles.length / 3 + " triangles" : ""));
    schedule();
  }

  // The agent types of the map's info in the choice; one the map no
  // longer has falls back to "default".
  function agentTypes() {
    const types = (N.info.navmesh && N.info.navmesh.agent_types) || [{ id: "default" }], sel = $("n_agent");
    if (!types.some((t) => t.id === N.agentType)) N.agentType = "default";
    sel.innerHTML = "";
    for (const t of types)
      sel.appendChild(new Option(t.id + (t.radius !== undefined ? " (radius " + t.radius + ", height " + t.height + ")" : ""), t.id));
    sel.value = N.agentType;
  }

  function describe() {
    const m = N.mesh, nm = m.navmesh, lines = [];
    lines.push("version " + m.version + ", tiles " + nm.tiles.x + "x" + nm.tiles.z + " (" + m.counts.tiles + " with polygons)");
    lines.push(m.counts.polygons + " polygons, " + m.counts.vertices + " vertices, " + m.counts.triangles + " triangles" +
               (m.counts.detail_vertices ? ", detail mesh" : ", no detail mesh"));
    lines.push("agent type " + m.agent_type + (nm.agent_types ? " of " + nm.agent_types.length : ""));
    const at = (nm.agent_types || []).find((t) => t.id === m.agent_type) || nm.settings.agent;
    lines.push("agent radius " + at.radius + ", height " + at.height +
               ", cell " + nm.settings.cell_size + " x " + nm.settings.cell_height);
    lines.push("obstacles " + nm.obstacles.length + ": " + nm.obstacles.map((o) => o.id).join(", "));
    lines.push("areas: " + (nm.areas.filter((a) => a.id).map((a) => a.id + (a.enabled ? "" : " (off)") + " x" + a.cost).join(", ") || "none"));
    lines.push("off-mesh links " + m.off_mesh_links.length);
    $("n_info").textContent = lines.join("\n");
  }

  // Builds every static batch from N.mesh.
  function buildLevel() {
    const m = N.mesh, R = N.R;
    R.clear();
    let ymin = Infinity, ymax = -Infinity;
    for (const t of m.tiles) for (let i = 1; i < t.vertices.length; i += 3) { ymin = Math.min(ymin, t.vertices[i]); ymax = Math.max(ymax, t.vertices[i]); }
    if (!isFinite(ymin)) { ymin = 0; ymax = 1; }
    const shade = (y) => 0.5 + 0.5 * (ymax > ymin ? (y - ymin) / (ymax - ymin) : 1);
    const disabledArea = new Set(m.navmesh.areas.filter((a) => !a.enabled).map((a) => a.area));
    // Surface: each polygon's triangles, own vertices (a colour a polygon).
    const S = GL3.builder(), edges = GL3.builder(), walls = GL3.builder(), tiles = GL3.builder();
    const spos = [], sidx = [], spoly = [];
    for (const t of m.tiles) {
      const nv = t.vertices.length / 3, ts = tileShade(t);
      const V = (i) => i < nv ? [t.vertices[3 * i], t.vertices[3 * i + 1], t.vertices[3 * i + 2]]
        : [t.detail_vertices[3 * (i - nv)], t.detail_vertices[3 * (i - nv) + 1], t.detail_vertices[3 * (i - nv) + 2]];
      const off = new Set(t.disabled);
      let tri = 0;
      t.polygons.forEach((poly, p) => {
        const ref = t.ref + p;
        N.refs.set(ref, { t, p });
        if (poly.length < 3) return; // an off-mesh link's polygon
        const base = off.has(p) || disabledArea.has(t.areas[p]) ? [120, 60, 60] : areaRGB(t.areas[p]);
        const nt = t.polygon_triangles ? t.polygon_triangles[p] : 0;
        for (let k = 0; k < nt; k++, tri++) {
          const ids = [];
          for (let c = 0; c < 3; c++) {
            const v = V(t.triangles[3 * tri + c]), s = shade(v[1]) * ts;
            ids.push(S.vert(v[0], v[1], v[2], [base[0] * s, base[1] * s, base[2] * s, 255]));
            spos.push(v[0], v[1], v[2]);
          }
          S.idx.push(...ids);
          const b = spos.length / 3 - 3;
          sidx.push(b, b + 1, b + 2);
          spoly.push(ref);
        }
        // Edges: walls dark, the rest light.
        for (let j = 0; j < poly.length; j++) {
          const a = V(poly[j]), b = V(poly[(j + 1) % poly.length]);
          if ((t.walls[p] >> j) & 1) walls.line(a, b, [10, 20, 30, 255]);
          else edges.line(a, b, [210, 240, 255, 150]);
        }
      });
      const b0 = t.bounds.min, b1 = t.bounds.max, y = b0[1];
      const c = [[b0[0], y, b0[2]], [b1[0], y, b0[2]], [b1[0], y, b1[2]], [b0[0], y, b1[2]]];
      for (let k = 0; k < 4; k++) tiles.line(c[k], c[(k + 1) % 4], [255, 255, 255, 90]);
    }
    N.surf = { pos: new Float32Array(spos), idx: new Uint32Array(sidx), poly: spoly };
    N.bounds = m.navmesh.bounds;
    N.ymin = ymin;
    N.ymax = ymax;
    let d = S.done();
    R.set("surface", "tri", d.pos, d.col, d.idx, { lift: 0.02, order: 1, lod: LOD_SURFACE });
    d = edges.done();
    R.set("edges", "line", d.pos, d.col, d.idx, { lift: 0.04, order: 2, blend: true });
    d = walls.done();
    R.set("walls", "line", d.pos, d.col, d.idx, { lift: 0.05, order: 2 });
    d = tiles.done();
    R.set("tiles", "line", d.pos, d.col, d.idx, { lift: 0.01, order: 2, blend: true });
    buildInput(ymin, ymax);
    buildThings();
    applyLayers();
  }

  // The input geometry, grey, heights shaded, under the surface.
  function buildInput(ymin, ymax) {
    const inp = N.mesh.input;
    N.R.drop("input");
    if (!inp) return;
    const pos = new Float32Array(inp.vertices), n = pos.length / 3, col = new Uint8Array(4 * n);
    let lo = ymin, hi = ymax;
    for (let i = 1; i < pos.length; i += 3) { lo = Math.min(lo, pos[i]); hi = Math.max(hi, pos[i]); }
    for (let i = 0; i < n; i++) {
      const s = 90 + Math.round(110 * (hi > lo ? (pos[3 * i + 1] - lo) / (hi - lo) : 1));
      col[4 * i] = s; col[4 * i + 1] = s; col[4 * i + 2] = s; col[4 * i + 3] = 255;
    }
    N.R.set("input", "tri", pos, col, new Uint32Array(inp.triangles), { order: 0, lod: LOD_INPUT });
  }

  // Obstacles, named areas' boxes and off-mesh links, as lines.
  function buildThings() {
    const m = N.mesh, ob = GL3.builder(), ar = GL3.builder(), ln = GL3.builder();
    const box = (B, a, b, rgba) => {
      const P = (i) => [i & 1 ? b[0] : a[0], i & 2 ? b[1] : a[1], i & 4 ? b[2] : a[2]];
      for (const [i, j] of [[0, 1], [1, 3], [3, 2], [2, 0], [4, 5], [5, 7], [7, 6], [6, 4], [0, 4], [1, 5], [2, 6], [3, 7]])
        B.line(P(i), P(j), rgba);
    };
    for (const o of m.navmesh.obstacles) {
      const rgba = [255, 150, 30, 255];
      if (o.box) box(ob, o.box.min, o.box.max, rgba);
      else {
        const c = o.cylinder.base, r = o.cylinder.radius, h = o.cylinder.height, K = 16;
        for (let k = 0; k < K; k++) {
          const a0 = (2 * Math.PI * k) / K, a1 = (2 * Math.PI * (k + 1)) / K;
          const p0 = [c[0] + r * Math.cos(a0), c[1], c[2] + r * Math.sin(a0)], p1 = [c[0] + r * Math.cos(a1), c[1], c[2] + r * Math.sin(a1)];
          ob.line(p0, p1, rgba);
          ob.line([p0[0], p0[1] + h, p0[2]], [p1[0], p1[1] + h, p1[2]], rgba);
          if (k % 4 === 0) ob.line(p0, [p0[0], p0[1] + h, p0[2]], rgba);
        }
      }
    }
    m.navmesh.areas.forEach((a, i) => {
      if (!a.id) return; // a grid's cost class
      const rgb = areaRGB(a.area);
      for (const b of m.area_boxes[i] || []) box(ar, b.min, b.max, [...rgb, a.enabled ? 255 : 110]);
    });
    for (const l of m.off_mesh_links) {
      const rgba = l.enabled ? [240, 240, 60, 255] : [140, 140, 140, 255], K = 12;
      const s = l.start, e = l.end, hgt = Math.max(0.5, Math.hypot(e[0] - s[0], e[2] - s[2]) * 0.25);
      let prev = s;
      for (let k = 1; k <= K; k++) {
        const u = k / K, p = [s[0] + (e[0] - s[0]) * u, s[1] + (e[1] - s[1]) * u + 4 * hgt * u * (1 - u), s[2] + (e[2] - s[2]) * u];
        ln.line(prev, p, rgba);
        prev = p;
      }
      if (!l.bidirectional) { // an arrow head at the end
        const dx = e[0] - s[0], dz = e[2] - s[2], L = Math.hypot(dx, dz) || 1, ux = dx / L, uz = dz / L, a = 0.4;
        ln.line(e, [e[0] - a * (ux - uz), e[1], e[2] - a * (uz + ux)], rgba);
        ln.line(e, [e[0] - a * (ux + uz), e[1], e[2] - a * (uz - ux)], rgba);
      }
    }
    for (const [name, B] of [["obstacles", ob], ["areas", ar], ["links", ln]]) {
      const d = B.done();
      N.R.set(name, "line", d.pos, d.col, d.idx, { order: 3 });
    }
  }

  function applyLayers() {
    const R = N.R;
    R.show("input", show("n_input"));
    R.show("surface", show("n_surface"));
    R.show("edges", show("n_polys"));
    R.show("walls", show("n_polys"));
    R.show("tiles", show("n_tiles"));
    R.show("obstacles", show("n_obstacles"));
    R.show("areas", show("n_areas"));
    R.show("links", show("n_links"));
    schedule();
  }

  // ---- the camera ----
  function fit() {
    const b = N.bounds;
    if (!b) return;
    const c = [(b.min[0] + b.max[0]) / 2, (N.ymin + N.ymax) / 2, (b.min[2] + b.max[2]) / 2];
    const span = Math.max(b.max[0] - b.min[0], b.max[2] - b.min[2], 1);
    Object.assign(N.cam, { target: c, dist: span * 1.3, span: span * 1.1 });
    schedule();
  }
  // The overlay keeps the full resolution: matrices and clicks use its size.
  const M = () => GL3.viewProj(N.cam, N.ov.width, N.ov.height);

  // The camera moved: coarse frames until it has been still for STILL_MS.
  function moved() {
    setMoving(true);
    clearTimeout(N.stillTimer);
    N.stillTimer = setTimeout(() => { setMoving(false); schedule(); }, STILL_MS);
    schedule();
  }
  // The WebGL canvas's resolution follows: MOVING_SCALE of the overlay's
  // while moving (its CSS size stays the overlay's), the overlay's when still.
  function setMoving(on) {
    N.moving = on;
    const w = Math.max(1, Math.round(N.ov.width * (on ? MOVING_SCALE : 1)));
    const h = Math.max(1, Math.round(N.ov.height * (on ? MOVING_SCALE : 1)));
    if (N.cv.width !== w || N.cv.height !== h) { N.cv.width = w; N.cv.height = h; }
  }

  let queued = false;
  function schedule() {
    if (queued || !N.R) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; frame(); });
  }

  // One frame: the level, then the overlay. Returns its time in ms.
  function frame() {
    if (!N.R || !N.id) return 0;
    const t0 = performance.now(), m = M();
    N.R.draw(m, N.moving);
    overlay(m);
    const ms = performance.now() - t0;
    N.frames.push(ms);
    N.frameInfo.push({ moving: N.moving, triangles: N.R.triangles, width: N.cv.width, height: N.cv.height });
    if (N.frames.length > 240) N.frames.shift();
    if (N.frameInfo.length > 240) N.frameInfo.shift();
    $("n_frame").textContent = N.R.triangles + " triangles" + (N.moving ? " (moving: coarse, " + N.cv.width + "x" + N.cv.height + ")" : "") +
      ", frame " + ms.toFixed(1) + " ms";
    return ms;
  }

  // The live parts on the 2D canvas: paths, markers, the crowd.
  function overlay(m) {
    const c = N.octx, w = N.ov.width, h = N.ov.height, P = (p) => GL3.project(m, w, h, p);
    c.clearRect(0, 0, w, h);
    N.drawn = {};
    if (show("n_corridor")) for (const a of ALGOS) drawCorridor(c, m, a);
    for (const a of ALGOS) {
      const ans = N.answers[a];
      if (!ans || !ans.path || !show("n_show_" + a)) continue;
      c.strokeStyle = PATH_RGB[a];
      c.lineWidth = a === "polyanya" ? 5 : 3;
      c.lineJoin = "round";
      c.beginPath();
      let started = false;
      const drawn = [];
      for (const p of ans.path) {
        const s = P(p);
        drawn.push(s);
        if (!s) { started = false; continue; }
        if (started) c.lineTo(s[0], s[1]); else c.moveTo(s[0], s[1]);
        started = true;
      }
      c.stroke();
      N.drawn[a] = drawn;
      // The snapped ends: white rings.
      for (const p of [ans.path[0], ans.path[ans.path.length - 1]]) {
        const s = P(p);
        if (!s) continue;
        c.strokeStyle = "#fff";
        c.lineWidth = 2;
        c.beginPath();
        c.arc(s[0], s[1], 7, 0, 2 * Math.PI);
        c.stroke();
      }
    }
    for (const [p, col] of [[N.start, "#20e020"], [N.goal, "#e020e0"]]) {
      const s = p && P(p);
      if (!s) continue;
      c.fillStyle = col;
      c.fillRect(s[0] - 5, s[1] - 5, 10, 10);
    }
    drawCrowd(c, m);
  }

  // A path's corridor, when the answer names its polygons.
  function drawCorridor(c, m, a) {
    const ans = N.answers[a];
    if (!ans || !ans.corridor || !show("n_show_" + a)) return;
    c.fillStyle = a === "polyanya" ? "rgba(255,60,60,0.25)" : "rgba(60,140,255,0.25)";
    for (const ref of ans.corridor) {
      const e = N.refs.get(ref);
      if (!e) continue;
      const t = e.t, poly = t.polygons[e.p];
      c.beginPath();
      poly.forEach((vi, k) => {
        const s = GL3.project(m, N.ov.width, N.ov.height, [t.vertices[3 * vi], t.vertices[3 * vi + 1], t.vertices[3 * vi + 2]]);
        if (!s) return;
        if (k) c.lineTo(s[0], s[1]); else c.moveTo(s[0], s[1]);
      });
      c.fill();
    }
  }

  function drawCrowd(c, m) {
    const cr = N.crowd;
    if (!cr || !cr.state) return;
    const w = N.ov.width, h = N.ov.height;
    for (const a of cr.state.agents) {
      const s = GL3.project(m, w, h, a.position);
      if (!s) continue;
      const e = GL3.project(m, w, h, [a.position[0] + a.radius, a.position[1], a.position[2]]);
      const r = Math.max(2.5, e ? Math.hypot(e[0] - s[0], e[1] - s[1]) : 3);
      c.fillStyle = STATE_RGB[a.state] || "#fff";
      c.beginPath();
      c.arc(s[0], s[1], r, 0, 2 * Math.PI);
      c.fill();
      const v = a.velocity, tip = GL3.project(m, w, h, [a.position[0] + v[0] * 0.5, a.position[1], a.position[2] + v[2] * 0.5]);
      if (tip && Math.hypot(v[0], v[2]) > 0.05) { // the velocity, half a second ahead
        c.strokeStyle = "#fff";
        c.lineWidth = 1.5;
        c.beginPath();
        c.moveTo(s[0], s[1]);
        c.lineTo(tip[0], tip[1]);
        const ang = Math.atan2(tip[1] - s[1], tip[0] - s[0]);
        c.lineTo(tip[0] - 5 * Math.cos(ang - 0.5), tip[1] - 5 * Math.sin(ang - 0.5));
        c.moveTo(tip[0], tip[1]);
        c.lineTo(tip[0] - 5 * Math.cos(ang + 0.5), tip[1] - 5 * Math.sin(ang + 0.5));
        c.stroke();
      }
      if (a.target && show("n_targets")) {
        const g = GL3.project(m, w, h, a.target);
        if (g) { c.strokeStyle = "rgba(255,255,255,0.5)"; c.strokeRect(g[0] - 3, g[1] - 3, 6, 6); }
      }
    }
  }

  // ---- picking and queries ----
  function pickAt(x, y) {
    if (!N.surf) return null;
    const r = GL3.ray(M(), N.ov.width, N.ov.height, x, y), hit = GL3.pick(r, N.surf.pos, N.surf.idx);
    if (!hit) return null;
    hit.ref = N.surf.poly[hit.tri];
    return hit;
  }

  async function click(x, y) {
    const hit = pickAt(x, y);
    if (!hit) { say("no walkable surface under the cursor"); return; }
    const p = hit.point.map((v) => Math.round(v * 1e4) / 1e4);
    N.picked = { point: p, ref: hit.ref };
    if (N.mode === "path") {
      if (!N.start || N.goal) { N.start = p; N.goal = null; N.answers = {}; say("start " + fmt(p) + "; now click a goal"); schedule(); return; }
      N.goal = p;
      await queryPaths();
    } else if (N.mode === "agent") {
      await crowdCommand({ add: [{ position: p }] });
    } else if (N.mode === "target") {
      const ids = N.crowd && N.crowd.state ? N.crowd.state.agents.map((a) => a.id) : [];
      await crowdCommand({ targets: ids.map((id) => ({ id, target: p })) });
    } else if (N.mode === "obstacle") {
      await toggleObstacle(p);
    }
  }
  const fmt = (p) => "[" + p.map((v) => v.toFixed(2)).join(", ") + "]";

  async function queryPaths() {
    const base = "v1/maps/" + encodeURIComponent(N.id) + "/path";
    N.answers = {};
    await Promise.all(ALGOS.map(async (a) => {
      const body = { start: N.start, goal: N.goal, algorithm: a };
      if (N.agentType !== "default") body.agent_type = N.agentType;
      if (show("n_corridor")) body.corridor = true;
      try {
        N.answers[a] = await api("POST", base, body);
      } catch (e) {
        if (body.corridor && e.status === 400) { // a server without corridors
          delete body.corridor;
          try { N.answers[a] = await api("POST", base, body); N.answers[a].corridorMissing = true; return; } catch (e2) { e = e2; }
        }
        N.answers[a] = { error: e.message };
      }
    }));
    for (const a of ALGOS) {
      const j = N.answers[a], box = $("n_stats_" + a);
      if (j.error) { box.textContent = a + ": " + j.error; box.className = "stats err"; continue; }
      box.className = "stats";
      box.textContent = a + ": " + (j.found ? "found" : "partial (" + j.reason + ")") +
        "\nlength " + j.length.toFixed(3) + ", cost " + j.cost.toFixed(3) +
        "\nexpanded " + j.stats.expanded + ", time " + j.stats.time_us + " us" + (j.stats.cached ? " (cached)" : "") +
        "\npoints " + j.path.length + ", polygons " + j.polygons + (j.exact ? ", exact" : "") +
        "\nsnapped start " + fmt(j.path[0]) + "\nsnapped goal " + fmt(j.path[j.path.length - 1]) +
        (j.corridorMissing ? "\n(this server does not answer corridors)" : "");
    }
    say("start " + fmt(N.start) + ", goal " + fmt(N.goal));
    schedule();
  }

  // ---- obstacles: a click on one removes it, elsewhere adds a cylinder ----
  async function toggleObstacle(p) {
    const obs = N.mesh.navmesh.obstacles;
    const hit = obs.find((o) => o.cylinder ? Math.hypot(o.cylinder.base[0] - p[0], o.cylinder.base[2] - p[2]) <= o.cylinder.radius + 0.3
      : p[0] >= o.box.min[0] - 0.3 && p[0] <= o.box.max[0] + 0.3 && p[2] >= o.box.min[2] - 0.3 && p[2] <= o.box.max[2] + 0.3);
    const r = parseFloat($("n_obsr").value) || 1;
    let body;
    if (hit) body = { remove_obstacles: [hit.id] };
    else {
      let id;
      do id = "viewer-" + (++N.obstacleSeq); while (obs.some((o) => o.id === id));
      body = { obstacles: [{ id, cylinder: { base: [p[0], p[1] - 0.5, p[2]], radius: r, height: 2.5 } }] };
    }
    const j = await api("PATCH", "v1/maps/" + encodeURIComponent(N.id), body);
    say((hit ? "removed obstacle " + hit.id : "added obstacle " + body.obstacles[0].id) + ": map version " + j.version);
    await load(false);
    if (N.start && N.goal) await queryPaths();
  }

  // ---- crowds ----
  const crowdBase = () => "v1/maps/" + encodeURIComponent(N.id) + "/crowds";

  async function startCrowd() {
    await endCrowd();
    const hz = parseInt($("n_hz").value, 10) || 20;
    const j = await api("POST", crowdBase(), { max_agents: parseInt($("n_maxagents").value, 10) || 100, tick_hz: hz });
    N.crowd = { id: j.crowd_id, hz, state: j, received: 0, gaps: 0, lastFrame: j.frame, firstFrame: null, ws: null, poll: null };
    openStream();
    showCrowd();
    return j;
  }

  function openStream() {
    const cr = N.crowd, u = new URL(crowdBase() + "/" + cr.id + "/stream", location.href);
    u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
    let ws;
    try { ws = new WebSocket(u.href); } catch (e) { return pollCrowd(); }
    cr.ws = ws;
    ws.onmessage = (ev) => {
      let j;
      try { j = JSON.parse(ev.data); } catch (e) { return; }
      if (j.error) { say("crowd: " + j.error.code + ": " + j.error.message, true); return; }
      // Ticks before the stream was open were never ours to miss.
      if (!cr.streamed && j.crowd_id === cr.id) { cr.streamed = true; cr.lastFrame = Math.max(cr.lastFrame, j.frame - 1); }
      receive(j);
    };
    ws.onerror = () => { if (N.crowd === cr && !cr.received) pollCrowd(); };
    // Closed by the server while the crowd is still ours (a restart behind
    // a proxy, a reaper): open it again; ticks missed meanwhile count as
    // missed.
    ws.onclose = () => {
      if (N.crowd !== cr || cr.ws !== ws) return;
      cr.ws = null;
      if (cr.poll) return;
      cr.reconnects = (cr.reconnects || 0) + 1;
      setTimeout(() => { if (N.crowd === cr && !cr.ws) openStream(); }, 100);
    };
  }

  // Without a WebSocket (a proxy that does not pass it, tokens): reads.
  function pollCrowd() {
    const cr = N.crowd;
    if (!cr || cr.poll) return;
    cr.poll = setInterval(async () => {
      try { receive(await api("GET", crowdBase() + "/" + cr.id)); } catch (e) { fail(e); }
    }, 100);
  }

  // A state from the stream (or a command's answer): ticks are counted by
  // their frame numbers, so a dropped one shows as a gap.
  function receive(j) {
    const cr = N.crowd;
    if (!cr || j.crowd_id !== cr.id) return;
    if (cr.firstFrame === null) cr.firstFrame = j.frame;
    if (j.frame > cr.lastFrame + 1) cr.gaps += j.frame - cr.lastFrame - 1;
    if (j.frame > cr.lastFrame) cr.received++;
    cr.lastFrame = Math.max(cr.lastFrame, j.frame);
    cr.state = j;
    showCrowd();
    schedule();
  }

  async function crowdCommand(cmd) {
    if (!N.crowd) await startCrowd();
    const cr = N.crowd;
    if (cr.ws && cr.ws.readyState === 1) { cr.ws.send(JSON.stringify(cmd)); return; }
    receive(await api("POST", crowdBase() + "/" + cr.id + "/step", cmd));
  }

  async function endCrowd() {
    const cr = N.crowd;
    if (!cr) return;
    N.crowd = null;
    if (cr.ws) cr.ws.close();
    clearInterval(cr.poll);
    await api("DELETE", crowdBase() + "/" + cr.id).catch(() => {});
    showCrowd();
  }

  function showCrowd() {
    const cr = N.crowd, box = $("n_crowd");
    if (!cr) { box.textContent = "no crowd"; return; }
    const s = cr.state, count = {};
    for (const a of s.agents) count[a.state] = (count[a.state] || 0) + 1;
    box.textContent = "crowd " + cr.id.slice(0, 10) + "... " + cr.hz + " Hz, frame " + s.frame + ", t " + s.time_s.toFixed(2) +
      " s\n" + s.agents.length + " agents: " + Object.entries(count).map(([k, v]) => k + " " + v).join(", ") +
      "\nstates received " + cr.received + ", missed ticks " + cr.gaps + ", step " + s.stats.step_us + " us" +
      (cr.ws ? " (stream)" : cr.poll ? " (polling)" : "") + (cr.reconnects ? ", reconnected " + cr.reconnects + "x" : "");
  }

  // ---- set up ----
  function init() {
    N.cv = $("gl");
    N.ov = $("ov");
    N.octx = N.ov.getContext("2d");
    N.R = GL3.renderer(N.cv);
    if (!N.R) { $("n_frame").textContent = "this browser has no WebGL2"; return; }
    let down = null;
    const ov = N.ov;
    ov.addEventListener("pointerdown", (ev) => { down = { x: ev.clientX, y: ev.clientY, moved: false, b: ev.button, shift: ev.shiftKey }; ov.setPointerCapture(ev.pointerId); });
    ov.addEventListener("pointermove", (ev) => {
      if (!down) return;
      const dx = ev.clientX - down.x, dy = ev.clientY - down.y;
      if (!down.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      down.moved = true;
      const cam = N.cam;
      if (down.b === 2 || down.shift || cam.mode === "top") { // pan
        const scale = (cam.mode === "top" ? cam.span : cam.dist) / N.ov.height;
        const cy = Math.cos(cam.yaw), sy = Math.sin(cam.yaw);
        if (cam.mode === "top") { cam.target[0] -= dx * scale; cam.target[2] -= dy * scale; }
        else { cam.target[0] -= (dx * cy - dy * sy) * scale; cam.target[2] -= (-dx * sy - dy * cy) * scale; }
      } else { // orbit
        cam.yaw -= dx * 0.008;
        cam.pitch = Math.max(0.05, Math.min(1.55, cam.pitch + dy * 0.008));
      }
      down.x = ev.clientX;
      down.y = ev.clientY;
      moved();
    });
    ov.addEventListener("pointerup", (ev) => {
      const d = down;
      down = null;
      if (!d || d.moved || d.b !== 0) return;
      const r = ov.getBoundingClientRect();
      click(ev.clientX - r.left, ev.clientY - r.top).catch(fail);
    });
    ov.addEventListener("contextmenu", (ev) => ev.preventDefault());
    ov.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const f = Math.pow(1.0015, ev.deltaY);
      N.cam.dist *= f;
      N.cam.span *= f;
      moved();
    }, { passive: false });
    for (const id of ["n_input"]) $(id).onchange = () => load(false).catch(fail);
    for (const id of ["n_surface", "n_polys", "n_tiles", "n_obstacles", "n_areas", "n_links"]) $(id).onchange = applyLayers;
    for (const id of ["n_show_polyanya", "n_show_detour", "n_targets"]) $(id).onchange = schedule;
    $("n_corridor").onchange = () => (N.start && N.goal ? queryPaths() : Promise.resolve()).catch(fail);
    $("n_view").onchange = () => { N.cam.mode = $("n_view").value; schedule(); };
    $("n_mode").onchange = () => { N.mode = $("n_mode").value; };
    $("n_agent").onchange = () => {
      N.agentType = $("n_agent").value;
      load(false).then(() => (N.start && N.goal ? queryPaths() : undefined)).catch(fail);
    };
    $("n_fit").onclick = fit;
    $("n_crowd_start").onclick = () => startCrowd().catch(fail);
    $("n_crowd_end").onclick = () => endCrowd().catch(fail);
  }

  function resize(w, h) {
    if (!N.cv) return;
    for (const c of [N.cv, N.ov]) { c.width = w; c.height = h; c.style.width = w + "px"; c.style.height = h + "px"; }
    setMoving(N.moving);
    schedule();
  }

  // For tests/browser and the bench: n frames orbiting the level, each
  // drawn as a moving camera's (coarse) frame, or with still = true at
  // full detail, and read back (the GPU done) before the clock stops.
  function benchFrames(n, still) {
    const times = [], yaw0 = N.cam.yaw;
    setMoving(!still);
    for (let i = 0; i < n; i++) {
      N.cam.yaw = yaw0 + (2 * Math.PI * i) / n;
      const t0 = performance.now();
      const m = M();
      N.R.draw(m, !still);
      overlay(m);
      N.R.finish();
      times.push(performance.now() - t0);
    }
    N.cam.yaw = yaw0;
    setMoving(false);
    N.R.draw(M(), false);
    return times;
  }

  return { state: N, init, open, load, resize, frame, fit, pickAt, click, queryPaths, startCrowd,
           endCrowd, crowdCommand, toggleObstacle, benchFrames, M, schedule, setMoving,
           lod: { input: LOD_INPUT, surface: LOD_SURFACE, scale: MOVING_SCALE, stillMs: STILL_MS },
           close: () => { endCrowd().catch(() => {}); N.id = null; } };
})();
