// viewer_gl.js -- the viewer's 3D layer (plain WebGL2, no library): column
// matrices, an orbit and a top-down camera, static triangle and line
// batches, and picking by a ray against the drawn triangles. Inlined into
// the page by the Makefile (server/viewer.html's include line); the reasons
// for plain WebGL over a library are in docs/viewer.md.
//
// A batch is one interleaved vertex buffer (x, y, z as floats and r, g, b,
// a as bytes: 16 bytes a vertex) and one index buffer (16-bit when the
// batch has at most 65,536 vertices, else the batch is split into parts
// that do), drawn in one call a part. A frame clears, draws the batches in
// their order (depth tested, lines after triangles; the list is sorted when
// a batch is added, not every frame) and allocates nothing; the 2D overlay
// (paths, agents, labels) is the caller's. Frames are drawn only when
// something changed (the callers' schedule()).
"use strict";

const GL3 = (() => {
  // ---- matrices (column major, as WebGL takes them) ----
  const mul = (a, b) => {
    const o = new Float64Array(16);
    for (let c = 0; c < 4; c++)
      for (let r = 0; r < 4; r++) {
        let s = 0;
        for (let k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
        o[c * 4 + r] = s;
      }
    return o;
  };
  const perspective = (fovy, aspect, near, far) => {
    const f = 1 / Math.tan(fovy / 2), o = new Float64Array(16);
    o[0] = f / aspect; o[5] = f; o[10] = (far + near) / (near - far); o[11] = -1;
    o[14] = (2 * far * near) / (near - far);
    return o;
  };
  const ortho = (w, h, near, far) => {
    const o = new Float64Array(16);
    o[0] = 2 / w; o[5] = 2 / h; o[10] = -2 / (far - near); o[14] = -(far + near) / (far - near); o[15] = 1;
    return o;
  };
  const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const norm = (a) => { const l = Math.hypot(a[0], a[1], a[2]) || 1; return [a[0] / l, a[1] / l, a[2] / l]; };
  const lookAt = (eye, at, up) => {
    const z = norm(sub(eye, at)), x = norm(cross(up, z)), y = cross(z, x), o = new Float64Array(16);
    o[0] = x[0]; o[4] = x[1]; o[8] = x[2]; o[12] = -dot(x, eye);
    o[1] = y[0]; o[5] = y[1]; o[9] = y[2]; o[13] = -dot(y, eye);
    o[2] = z[0]; o[6] = z[1]; o[10] = z[2]; o[14] = -dot(z, eye);
    o[15] = 1;
    return o;
  };
  // The inverse of a 4x4 (cofactors): for unprojecting clicks.
  const invert = (m) => {
    const a = m, o = new Float64Array(16);
    o[0] = a[5] * a[10] * a[15] - a[5] * a[11] * a[14] - a[9] * a[6] * a[15] + a[9] * a[7] * a[14] + a[13] * a[6] * a[11] - a[13] * a[7] * a[10];
    o[4] = -a[4] * a[10] * a[15] + a[4] * a[11] * a[14] + a[8] * a[6] * a[15] - a[8] * a[7] * a[14] - a[12] * a[6] * a[11] + a[12] * a[7] * a[10];
    o[8] = a[4] * a[9] * a[15] - a[4] * a[11] * a[13] - a[8] * a[5] * a[15] + a[8] * a[7] * a[13] + a[12] * a[5] * a[11] - a[12] * a[7] * a[9];
    o[12] = -a[4] * a[9] * a[14] + a[4] * a[10] * a[13] + a[8] * a[5] * a[14] - a[8] * a[6] * a[13] - a[12] * a[5] * a[10] + a[12] * a[6] * a[9];
    o[1] = -a[1] * a[10] * a[15] + a[1] * a[11] * a[14] + a[9] * a[2] * a[15] - a[9] * a[3] * a[14] - a[13] * a[2] * a[11] + a[13] * a[3] * a[10];
    o[5] = a[0] * a[10] * a[15] - a[0] * a[11] * a[14] - a[8] * a[2] * a[15] + a[8] * a[3] * a[14] + a[12] * a[2] * a[11] - a[12] * a[3] * a[10];
    o[9] = -a[0] * a[9] * a[15] + a[0] * a[11] * a[13] + a[8] * a[1] * a[15] - a[8] * a[3] * a[13] - a[12] * a[1] * a[11] + a[12] * a[3] * a[9];
    o[13] = a[0] * a[9] * a[14] - a[0] * a[10] * a[13] - a[8] * a[1] * a[14] + a[8] * a[2] * a[13] + a[12] * a[1] * a[10] - a[12] * a[2] * a[9];
    o[2] = a[1] * a[6] * a[15] - a[1] * a[7] * a[14] - a[5] * a[2] * a[15] + a[5] * a[3] * a[14] + a[13] * a[2] * a[7] - a[13] * a[3] * a[6];
    o[6] = -a[0] * a[6] * a[15] + a[0] * a[7] * a[14] + a[4] * a[2] * a[15] - a[4] * a[3] * a[14] - a[12] * a[2] * a[7] + a[12] * a[3] * a[6];
    o[10] = a[0] * a[5] * a[15] - a[0] * a[7] * a[13] - a[4] * a[1] * a[15] + a[4] * a[3] * a[13] + a[12] * a[1] * a[7] - a[12] * a[3] * a[5];
    o[14] = -a[0] * a[5] * a[14] + a[0] * a[6] * a[13] + a[4] * a[1] * a[14] - a[4] * a[2] * a[13] - a[12] * a[1] * a[6] + a[12] * a[2] * a[5];
    o[3] = -a[1] * a[6] * a[11] + a[1] * a[7] * a[10] + a[5] * a[2] * a[11] - a[5] * a[3] * a[10] - a[9] * a[2] * a[7] + a[9] * a[3] * a[6];
    o[7] = a[0] * a[6] * a[11] - a[0] * a[7] * a[10] - a[4] * a[2] * a[11] + a[4] * a[3] * a[10] + a[8] * a[2] * a[7] - a[8] * a[3] * a[6];
    o[11] = -a[0] * a[5] * a[11] + a[0] * a[7] * a[9] + a[4] * a[1] * a[11] - a[4] * a[3] * a[9] - a[8] * a[1] * a[7] + a[8] * a[3] * a[5];
    o[15] = a[0] * a[5] * a[10] - a[0] * a[6] * a[9] - a[4] * a[1] * a[10] + a[4] * a[2] * a[9] + a[8] * a[1] * a[6] - a[8] * a[2] * a[5];
    const det = a[0] * o[0] + a[1] * o[4] + a[2] * o[8] + a[3] * o[12];
    for (let i = 0; i < 16; i++) o[i] /= det || 1;
    return o;
  };
  const apply = (m, p, w = 1) => [
    m[0] * p[0] + m[4] * p[1] + m[8] * p[2] + m[12] * w,
    m[1] * p[0] + m[5] * p[1] + m[9] * p[2] + m[13] * w,
    m[2] * p[0] + m[6] * p[1] + m[10] * p[2] + m[14] * w,
    m[3] * p[0] + m[7] * p[1] + m[11] * p[2] + m[15] * w,
  ];

  // ---- the camera: orbit (yaw, pitch, distance around a target) or top
  // down (orthographic, looking along -y, north = -z up the screen) ----
  function camera() {
    return { mode: "orbit", target: [0, 0, 0], yaw: 0.8, pitch: 0.9, dist: 50, span: 50 };
  }
  // The view-projection matrix of cam for a w x h canvas.
  function viewProj(cam, w, h) {
    const aspect = w / Math.max(1, h);
    if (cam.mode === "top") {
      const t = cam.target, eye = [t[0], t[1] + cam.span * 4, t[2]];
      const V = lookAt(eye, t, [0, 0, -1]);
      return mul(ortho(cam.span * aspect, cam.span, 0.01, cam.span * 8), V);
    }
    const cp = Math.cos(cam.pitch), t = cam.target;
    const eye = [t[0] + cam.dist * cp * Math.sin(cam.yaw), t[1] + cam.dist * Math.sin(cam.pitch),
                 t[2] + cam.dist * cp * Math.cos(cam.yaw)];
    return mul(perspective(Math.PI / 4, aspect, cam.dist / 200, cam.dist * 20), lookAt(eye, t, [0, 1, 0]));
  }
  // World point -> canvas pixel [x, y, depth] (y down), or null behind.
  function project(M, w, h, p) {
    const c = apply(M, p);
    if (c[3] <= 0) return null;
    return [(c[0] / c[3] + 1) / 2 * w, (1 - c[1] / c[3]) / 2 * h, c[2] / c[3]];
  }
  // Canvas pixel -> world ray {o, d}.
  function ray(M, w, h, x, y) {
    const inv = invert(M), nx = (2 * x) / w - 1, ny = 1 - (2 * y) / h;
    const a = apply(inv, [nx, ny, -1]), b = apply(inv, [nx, ny, 1]);
    const o = [a[0] / a[3], a[1] / a[3], a[2] / a[3]], e = [b[0] / b[3], b[1] / b[3], b[2] / b[3]];
    return { o, d: norm(sub(e, o)) };
  }
  // The nearest hit of r on triangles (pos: xyz floats, idx: 3 a
  // triangle) with its distance and triangle, or null. Moller-Trumbore,
  // both faces, every triangle (the surface's few hundred thousand at most
  // take milliseconds).
  function pick(r, pos, idx) {
    let best = null;
    const [ox, oy, oz] = r.o, [dx, dy, dz] = r.d;
    for (let t = 0; t < idx.length; t += 3) {
      const a = 3 * idx[t], b = 3 * idx[t + 1], c = 3 * idx[t + 2];
      const e1x = pos[b] - pos[a], e1y = pos[b + 1] - pos[a + 1], e1z = pos[b + 2] - pos[a + 2];
      const e2x = pos[c] - pos[a], e2y = pos[c + 1] - pos[a + 1], e2z = pos[c + 2] - pos[a + 2];
      const px = dy * e2z - dz * e2y, py = dz * e2x - dx * e2z, pz = dx * e2y - dy * e2x;
      const det = e1x * px + e1y * py + e1z * pz;
      if (Math.abs(det) < 1e-12) continue;
      const inv = 1 / det, tx = ox - pos[a], ty = oy - pos[a + 1], tz = oz - pos[a + 2];
      const u = (tx * px + ty * py + tz * pz) * inv;
      if (u < 0 || u > 1) continue;
      const qx = ty * e1z - tz * e1y, qy = tz * e1x - tx * e1z, qz = tx * e1y - ty * e1x;
      const v = (dx * qx + dy * qy + dz * qz) * inv;
      if (v < 0 || u + v > 1) continue;
      const d = (e2x * qx + e2y * qy + e2z * qz) * inv;
      if (d > 0 && (!best || d < best.t)) best = { t: d, tri: t / 3 };
    }
    if (best) best.point = [ox + dx * best.t, oy + dy * best.t, oz + dz * best.t];
    return best;
  }

  // ---- level of detail: vertex clustering ----
  // A coarse version of the triangles (pos xyz, col rgba, idx) with about
  // `target` triangles or fewer: space is cut into cubes, the vertices of
  // a cube merge into one (their mean position and colour), a triangle
  // whose corners fall in fewer than three cubes disappears and duplicates
  // are drawn once (Rossignac and Borrel's clustering: one pass, any
  // mesh, no topology needed). The cube side starts where a flat surface
  // of the mesh's area would keep `target` triangles and grows until the
  // result fits. Null when the mesh is already small enough.
  function decimate(pos, col, idx, target) {
    const ntri = idx.length / 3;
    if (ntri <= target) return null;
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (let i = 0; i < pos.length; i += 3)
      for (let k = 0; k < 3; k++) { lo[k] = Math.min(lo[k], pos[i + k]); hi[k] = Math.max(hi[k], pos[i + k]); }
    let area = 0;
    for (let t = 0; t < idx.length; t += 3) {
      const a = 3 * idx[t], b = 3 * idx[t + 1], c = 3 * idx[t + 2];
      const e = [pos[b] - pos[a], pos[b + 1] - pos[a + 1], pos[b + 2] - pos[a + 2]];
      const f = [pos[c] - pos[a], pos[c + 1] - pos[a + 1], pos[c + 2] - pos[a + 2]];
      area += Math.hypot(...cross(e, f)) / 2;
    }
    const extent = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e-6);
    // A flat surface cut by cubes of side s keeps about 2 area / s^2 triangles.
    let side = Math.max(Math.sqrt((2 * area) / target), extent / 65536);
    const cell = new Int32Array(pos.length / 3);
    let out = null;
    for (let round = 0; round < 12; round++) {
      const nx = Math.floor((hi[0] - lo[0]) / side) + 1, ny = Math.floor((hi[1] - lo[1]) / side) + 1;
      const ids = new Map(), sum = [];
      for (let v = 0; v < cell.length; v++) {
        const ix = Math.floor((pos[3 * v] - lo[0]) / side), iy = Math.floor((pos[3 * v + 1] - lo[1]) / side);
        const iz = Math.floor((pos[3 * v + 2] - lo[2]) / side), key = (iz * ny + iy) * nx + ix;
        let c = ids.get(key);
        if (c === undefined) { c = ids.size; ids.set(key, c); sum.push(0, 0, 0, 0, 0, 0, 0, 0, 0); }
        cell[v] = c;
        const s = 9 * c;
        sum[s] += pos[3 * v]; sum[s + 1] += pos[3 * v + 1]; sum[s + 2] += pos[3 * v + 2];
        for (let k = 0; k < 4; k++) sum[s + 3 + k] += col[4 * v + k];
        sum[s + 8]++;
      }
      // A triangle's key: its corners' clusters in order, one number
      // while that fits in a double's 53 bits.
      const seen = new Set(), tri = [], K = ids.size, exact = K < 200000;
      for (let t = 0; t < idx.length; t += 3) {
        const a = cell[idx[t]], b = cell[idx[t + 1]], c = cell[idx[t + 2]];
        if (a === b || b === c || a === c) continue;
        const lo3 = Math.min(a, b, c), hi3 = Math.max(a, b, c), mid = a + b + c - lo3 - hi3;
        const key = exact ? (lo3 * K + mid) * K + hi3 : lo3 + "," + mid + "," + hi3;
        if (seen.has(key)) continue;
        seen.add(key);
        tri.push(a, b, c);
      }
      out = { sum, n: ids.size, tri };
      if (tri.length / 3 <= target) break;
      side *= 1.25;
    }
    const p = new Float32Array(3 * out.n), c = new Uint8Array(4 * out.n);
    for (let i = 0; i < out.n; i++) {
      const s = out.sum, w = s[9 * i + 8];
      for (let k = 0; k < 3; k++) p[3 * i + k] = s[9 * i + k] / w;
      for (let k = 0; k < 4; k++) c[4 * i + k] = Math.round(s[9 * i + 3 + k] / w);
    }
    return { pos: p, col: c, idx: new Uint32Array(out.tri) };
  }

  // ---- the renderer ----
  const VS = `#version 300 es
in vec3 p; in vec4 c; uniform mat4 m; uniform float lift; out vec4 v;
void main() { v = c; gl_Position = m * vec4(p.x, p.y + lift, p.z, 1.0); }`;
  const FS = `#version 300 es
precision mediump float; in vec4 v; out vec4 o; void main() { o = v; }`;

  function renderer(cv) {
    const gl = cv.getContext("webgl2", { antialias: false, preserveDrawingBuffer: true });
    if (!gl) return null;
    const sh = (type, src) => {
      const s = gl.createShader(type);
      gl.shaderSource(s, src);
      gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
      return s;
    };
    const prog = gl.createProgram();
    gl.attachShader(prog, sh(gl.VERTEX_SHADER, VS));
    gl.attachShader(prog, sh(gl.FRAGMENT_SHADER, FS));
    gl.linkProgram(prog);
    if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(prog));
    const loc = { p: gl.getAttribLocation(prog, "p"), c: gl.getAttribLocation(prog, "c"),
                  m: gl.getUniformLocation(prog, "m"), lift: gl.getUniformLocation(prog, "lift") };
    const R = { gl, batches: new Map(), triangles: 0, list: [] };
    const M32 = new Float32Array(16);
    const sortList = () => {
      R.list = [...R.batches.values()]
        .sort((a, b) => a.order - b.order || (a.kind === "line") - (b.kind === "line") || a.blend - b.blend);
    };
    // One part: vertices [v0, v1) of pos/col and the indices idx (already
    // relative to v0) in an interleaved buffer and a 16- or 32-bit index
    // buffer.
    const part = (pos, col, v0, v1, idx) => {
      const nv = v1 - v0, buf = new ArrayBuffer(16 * nv), f = new Float32Array(buf), u = new Uint8Array(buf);
      for (let i = 0; i < nv; i++) {
        f[4 * i] = pos[3 * (v0 + i)]; f[4 * i + 1] = pos[3 * (v0 + i) + 1]; f[4 * i + 2] = pos[3 * (v0 + i) + 2];
        for (let k = 0; k < 4; k++) u[16 * i + 12 + k] = col[4 * (v0 + i) + k];
      }
      const vao = gl.createVertexArray();
      gl.bindVertexArray(vao);
      const bv = gl.createBuffer(), bi = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, bv);
      gl.bufferData(gl.ARRAY_BUFFER, buf, gl.STATIC_DRAW);
      gl.enableVertexAttribArray(loc.p);
      gl.vertexAttribPointer(loc.p, 3, gl.FLOAT, false, 16, 0);
      gl.enableVertexAttribArray(loc.c);
      gl.vertexAttribPointer(loc.c, 4, gl.UNSIGNED_BYTE, true, 16, 12);
      const small = nv <= 65536;
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, bi);
      gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, small ? Uint16Array.from(idx) : Uint32Array.from(idx), gl.STATIC_DRAW);
      gl.bindVertexArray(null);
      return { vao, bufs: [bv, bi], n: idx.length, type: small ? gl.UNSIGNED_SHORT : gl.UNSIGNED_INT };
    };
    // A batch from flat positions (Float32Array, xyz), colours (Uint8Array,
    // rgba a vertex) and indices (Uint32Array): kind "tri" or "line";
    // `lift` raises it (lines drawn over the surface they outline);
    // `blend` for translucent ones; `lod` (triangles) gives a triangle
    // batch with more than that a coarse version (decimate()) drawn
    // instead while the camera moves.
    R.set = (name, kind, pos, col, idx, opt = {}) => {
      R.drop(name);
      if (!idx.length) return;
      const parts = upload(kind, pos, col, idx);
      let coarse = null, coarseN = 0;
      const d = kind === "tri" && opt.lod ? decimate(pos, col, idx, opt.lod) : null;
      if (d) { coarse = d.idx.length ? upload(kind, d.pos, d.col, d.idx) : []; coarseN = d.idx.length; }
      R.batches.set(name, { kind, parts, n: idx.length, coarse, coarseN, show: true,
                            lift: opt.lift || 0, blend: !!opt.blend, order: opt.order || 0 });
      sortList();
    };
    // The parts of a batch: one when it has at most 65,536 vertices.
    const upload = (kind, pos, col, idx) => {
      const nv = pos.length / 3, per = kind === "line" ? 2 : 3, parts = [];
      if (nv <= 65536) parts.push(part(pos, col, 0, nv, idx));
      else {
        // Parts of whole primitives whose vertices span at most 65,536
        // (the builders' batches and OBJ files number vertices in order,
        // so a run of primitives mostly spans a compact range).
        let start = 0;
        while (start < idx.length) {
          let lo = Infinity, hi = -Infinity, end = start;
          for (; end < idx.length; end += per) {
            let l = lo, h = hi;
            for (let k = 0; k < per; k++) { l = Math.min(l, idx[end + k]); h = Math.max(h, idx[end + k]); }
            if (h - l >= 65536 && end > start) break;
            lo = l; hi = h;
          }
          const sub = new Uint32Array(end - start);
          for (let k = start; k < end; k++) sub[k - start] = idx[k] - lo;
          parts.push(part(pos, col, lo, hi + 1, sub));
          start = end;
        }
      }
      return parts;
    };
    R.drop = (name) => {
      const b = R.batches.get(name);
      if (!b) return;
      for (const p of b.parts.concat(b.coarse || [])) {
        for (const x of p.bufs) gl.deleteBuffer(x);
        gl.deleteVertexArray(p.vao);
      }
      R.batches.delete(name);
      sortList();
    };
    R.show = (name, on) => { const b = R.batches.get(name); if (b) b.show = on; };
    R.clear = () => { for (const k of [...R.batches.keys()]) R.drop(k); };
    // One frame with the view-projection M; returns the triangles drawn.
    // moving: the camera is moving, batches with a coarse version draw it.
    R.draw = (M, moving) => {
      gl.viewport(0, 0, cv.width, cv.height);
      gl.clearColor(0.16, 0.17, 0.2, 1);
      gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
      gl.enable(gl.DEPTH_TEST);
      gl.useProgram(prog);
      M32.set(M);
      gl.uniformMatrix4fv(loc.m, false, M32);
      let tris = 0;
      for (const b of R.list) {
        if (!b.show) continue;
        gl.uniform1f(loc.lift, b.lift);
        if (b.blend) { gl.enable(gl.BLEND); gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA); gl.depthMask(false); }
        const coarse = moving && b.coarse;
        for (const p of coarse ? b.coarse : b.parts) {
          gl.bindVertexArray(p.vao);
          gl.drawElements(b.kind === "line" ? gl.LINES : gl.TRIANGLES, p.n, p.type, 0);
        }
        if (b.blend) { gl.disable(gl.BLEND); gl.depthMask(true); }
        if (b.kind === "tri") tris += (coarse ? b.coarseN : b.n) / 3;
      }
      gl.bindVertexArray(null);
      R.triangles = tris;
      return tris;
    };
    // Waits until the GPU has finished the frame (a one-pixel read).
    R.finish = () => { const px = new Uint8Array(4); gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px); };
    return R;
  }

  // A growing vertex/index list for building batches.
  function builder() {
    const B = { pos: [], col: [], idx: [] };
    B.vert = (x, y, z, rgba) => {
      B.pos.push(x, y, z);
      B.col.push(rgba[0], rgba[1], rgba[2], rgba[3] === undefined ? 255 : rgba[3]);
      return B.pos.length / 3 - 1;
    };
    B.line = (a, b, rgba) => { B.idx.push(B.vert(a[0], a[1], a[2], rgba), B.vert(b[0], b[1], b[2], rgba)); };
    B.done = () => ({ pos: new Float32Array(B.pos), col: new Uint8Array(B.col), idx: new Uint32Array(B.idx) });
    return B;
  }

  return { camera, viewProj, project, ray, pick, renderer, builder, invert, apply, decimate };
})();
