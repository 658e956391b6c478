// harness.js -- what the 3D viewer tests and the viewer benchmark share: a
// real pathd ($PATHD_BIN) on a free loopback port, Debian's chromium
// ($CHROMIUM) driven by playwright-core, the API, the data directory of
// the real level ($PATHD_MESH_DIR), generated levels, and a projection of
// world points to the screen written here from the camera matrix alone.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const ROOT = path.resolve(__dirname, '../..');
const BIN = process.env.PATHD_BIN || path.join(ROOT, 'build/pathd');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = process.env.BROWSER_ARTIFACTS || path.join(ROOT, 'build/browser');
// RecastDemo's nav_test.obj and its test cases, read in place (never copied
// into the repository); CI always has them.
const MESH_DIR = process.env.PATHD_MESH_DIR || path.join(ROOT, '../shared/benchmarks/meshes');
const IN_CI = /^(1|true)$/i.test(process.env.CI || '');
// A quiet, self-contained headless chromium (no network of its own).
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'];

function startServer(args = []) {
    return new Promise((resolve, reject) => {
        const proc = spawn(BIN, ['--port', '0', '--workers', '2', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        const timer = setTimeout(() => reject(new Error(`pathd did not start: ${out}`)), 20000);
        proc.on('error', reject);
        proc.stdout.on('data', (d) => {
            out += d;
            const m = /listening on [^:]+:(\d+)/.exec(out);
            if (!m || proc.url) return;
            proc.url = `http://127.0.0.1:${m[1]}`;
            clearTimeout(timer);
            resolve(proc);
        });
    });
}

async function stopServer(srv) {
    if (!srv || srv.exitCode !== null) return;
    const done = new Promise((r) => srv.once('exit', r));
    srv.kill('SIGTERM');
    await done;
}

function client(base) {
    return async function api(method, url, body, ctype) {
        const opt = { method, headers: {} };
        if (body !== undefined) {
            opt.body = typeof body === 'string' ? body : JSON.stringify(body);
            opt.headers['Content-Type'] = ctype || 'application/json';
        }
        // A session serves one request at a time: while the page's own
        // poll of it is being answered, the test's request is refused 409
        // session_busy, unrun, "retry when it is answered". So it does.
        for (let tries = 0; ; tries++) {
            const r = await fetch(base + url, opt);
            const text = await r.text();
            if (r.status === 409 && tries < 100 && text.includes('"session_busy"')) {
                await new Promise((res) => setTimeout(res, 20));
                continue;
            }
            if (!r.ok) throw new Error(`${method} ${url}: ${r.status} ${text}`);
            return text ? JSON.parse(text) : null;
        }
    };
}

async function launch(viewport = { width: 1600, height: 1000 }) {
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'pathd-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM, headless: true, args: FLAGS, viewport,
    });
    context.profileDir = profile;
    const page = context.pages()[0] || (await context.newPage());
    page.on('pageerror', (e) => console.error('page error:', e.message));
    return { context, page };
}

async function close(b) {
    if (!b || !b.context) return;
    await b.context.close();
    fs.rmSync(b.context.profileDir, { recursive: true, force: true });
}

async function waitFor(page, fn, arg, what, ms = 30000) {
    const t0 = Date.now();
    for (;;) {
        const v = await page.evaluate(fn, arg);
        if (v) return v;
        if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 25));
    }
}

// What every viewer test starts with: the artifacts folder, a pathd
// (args as startServer's) answering /readyz, chromium on the viewer page
// with `selector` in it. Returns { srv, api, b, page } for closeViewer.
async function openViewer(selector, args = []) {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const v = { srv: await startServer(args) };
    v.api = client(v.srv.url);
    for (let i = 0; ; i++) {
        try { if ((await fetch(v.srv.url + '/readyz')).ok) break; } catch { /* not yet */ }
        if (i > 500) throw new Error('pathd never got ready');
        await new Promise((r) => setTimeout(r, 20));
    }
    v.b = await launch();
    v.page = v.b.page;
    await v.page.goto(v.srv.url + '/');
    await v.page.waitForSelector(selector, { state: 'attached' });
    return v;
}

async function closeViewer(v) {
    if (!v) return;
    await close(v.b);
    await stopServer(v.srv);
}

// World point p -> canvas pixel, by a column-major 4x4 matrix M (what
// WebGL takes), written here apart from the viewer's own code.
function project(M, w, h, p) {
    const x = M[0] * p[0] + M[4] * p[1] + M[8] * p[2] + M[12];
    const y = M[1] * p[0] + M[5] * p[1] + M[9] * p[2] + M[13];
    const ww = M[3] * p[0] + M[7] * p[1] + M[11] * p[2] + M[15];
    if (ww <= 0) return null;
    return [(x / ww + 1) / 2 * w, (1 - y / ww) / 2 * h];
}

// ---- generated levels (OBJ text) ----

// Quads as two triangles, wound so their normals point up (Recast's
// walkable test).
function objWriter() {
    const v = [], f = [];
    const vert = (x, y, z) => { v.push(`v ${x.toFixed(4)} ${y.toFixed(4)} ${z.toFixed(4)}`); return v.length; };
    return {
        quad(x0, x1, z0, z1, y00, y01, y10, y11) { // heights at (x0,z0), (x0,z1), (x1,z0), (x1,z1)
            const a = vert(x0, y00, z0), b = vert(x0, y01, z1), c = vert(x1, y11, z1), d = vert(x1, y10, z0);
            f.push(`f ${a} ${b} ${c}`, `f ${a} ${c} ${d}`);
        },
        text: () => `# generated by tests/browser/harness.js\n${v.join('\n')}\n${f.join('\n')}\n`,
        triangles: () => f.length,
    };
}

// A three-storey building, 40 x 24: floors at y = 0, 4 and 8, the upper
// two with an 8 x 8 light well in the middle and an opening for the ramp
// that comes up to them (4 up over 14 along z, 16 degrees, 4 wide): from
// the ground at x 34..38, and from the first floor at x 2..6.
function multiFloorLevel() {
    const o = objWriter(), W = 40, D = 24, flat = (x0, x1, z0, z1, y) => o.quad(x0, x1, z0, z1, y, y, y, y);
    flat(0, W, 0, D, 0);
    for (const [y, bands] of [[4, [[0, 16], [24, 30]]], [8, [[8, 16], [24, W]]]]) {
        flat(0, W, 0, 8, y);
        flat(0, W, 16, D, y);
        for (const [x0, x1] of bands) flat(x0, x1, 8, 16, y);
    }
    o.quad(34, 38, 2, 16, 0, 4, 0, 4);
    o.quad(2, 6, 2, 16, 4, 8, 4, 8);
    return o.text();
}

// A rolling heightfield of n x n quads (2 n^2 triangles), one unit apart,
// its (n + 1)^2 vertices shared as a modelling tool writes them.
function terrainLevel(n) {
    const h = (x, z) => 2.5 * Math.sin(x * 0.07) * Math.cos(z * 0.05) + 0.8 * Math.sin(x * 0.23 + z * 0.17);
    const v = [], f = [], id = (x, z) => z * (n + 1) + x + 1;
    for (let z = 0; z <= n; z++) for (let x = 0; x <= n; x++) v.push(`v ${x} ${h(x, z).toFixed(4)} ${z}`);
    for (let z = 0; z < n; z++)
        for (let x = 0; x < n; x++) {
            const a = id(x, z), b = id(x, z + 1), c = id(x + 1, z + 1), d = id(x + 1, z);
            f.push(`f ${a} ${b} ${c}`, `f ${a} ${c} ${d}`);
        }
    return { text: `# generated by tests/browser/harness.js\n${v.join('\n')}\n${f.join('\n')}\n`, triangles: f.length };
}

module.exports = { ROOT, ARTIFACTS, MESH_DIR, IN_CI, startServer, stopServer, client, launch, close, waitFor,
    openViewer, closeViewer,
    project, multiFloorLevel, terrainLevel };
