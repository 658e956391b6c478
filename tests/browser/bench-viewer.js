// bench-viewer.js -- `make bench-viewer` (and `make bench`): the 3D
// viewer's frame time on a level of at least 100,000 triangles, measured in
// Debian's headless chromium (software WebGL: SwiftShader) against a real
// pathd. A figure, not a test: it asserts nothing about time.
//
// The level: a generated rolling terrain of N x N unit quads (2 N^2 input
// triangles, N = 224 by default: 100,352), uploaded as OBJ; the viewer
// shows its input geometry and its navmesh surface, edges and walls. The
// camera orbits the level once over FRAMES frames (default 240) as a
// moving camera's frames (the viewer draws the input geometry's coarse
// version while the camera moves); each frame is drawn and read back
// (gl.readPixels of one pixel, so the GPU work is done when the clock
// stops). Then FRAMES/4 frames of the same orbit at full detail (what the
// frame drawn when the camera stops costs). Printed: triangles drawn, median, p95 and
// max frame time, the frame rate the median allows, the machine's load
// average, and the CPU time chromium's processes spent a frame (the GPU
// process rasterises: on a shared machine the wall clock includes waiting
// for a core, the CPU time does not); the times go to
// build/browser/bench-viewer.json.
//
// BENCH_BEFORE=<git revision> compares: the viewer page of that revision
// (server/viewer.html and its included scripts, read with git show) is
// opened in a second tab of the same chromium against the same server and
// level, and the two are measured in alternating blocks of frames, so both
// see the same load; both medians and their ratio are printed.
//
//   PATHD_BIN=build/pathd node tests/browser/bench-viewer.js [N] [FRAMES]
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const H = require('./harness');
const { execFileSync } = require('node:child_process');

// The viewer page of git revision rev, its include lines replaced by the
// scripts as the Makefile does.
function pageAt(rev) {
    const show = (f) => execFileSync('git', ['-C', H.ROOT, 'show', `${rev}:server/${f}`], { encoding: 'utf8', maxBuffer: 1 << 26 });
    return show('viewer.html').split('\n').map((l) => {
        const m = /^<!-- include ([A-Za-z0-9_.-]+) -->$/.exec(l);
        return m ? `<script>\n${show(m[1])}</script>` : l;
    }).join('\n');
}

// Opens the viewer (html: another revision's page, else the server's) on
// the terrain with its input geometry shown.
async function openViewer(context, url, html) {
    const page = await context.newPage();
    if (html) await page.route((u) => u.search === '?before', (route) => route.fulfill({ contentType: 'text/html', body: html }));
    await page.goto(url + (html ? '/?before' : '/'));
    await page.waitForSelector('#gl', { state: 'attached' });
    await H.waitFor(page, () => [...document.querySelectorAll('#map option')].some((o) => o.value === 'terrain'), null, 'the level listed');
    await page.selectOption('#map', 'terrain');
    await H.waitFor(page, () => { const N = window.pathdViewer.nav.state; return N.mesh && N.mesh.id === 'terrain'; }, null, 'the mesh', 120000);
    await page.click('#n_input');
    await H.waitFor(page, () => window.pathdViewer.nav.state.mesh.input, null, 'the input geometry', 120000);
    await page.evaluate(() => window.pathdViewer.nav.benchFrames(10)); // warm up: shaders, buffers
    return page;
}
const median = (t) => { const s = [...t].sort((a, c) => a - c); return s[Math.floor(s.length / 2)]; };

// CPU seconds (user + system) used so far by each chromium process of the
// profile dir, by its --type (gpu-process, renderer, browser): what a frame
// costs the machine whatever else runs on it (the wall clock does not say,
// on a shared machine).
function chromiumCpu(profileDir) {
    const tick = 100; // USER_HZ: Linux reports /proc/<pid>/stat times in 1/100 s
    const out = {};
    for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
        let cmd, stat;
        try {
            cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
            if (!cmd.includes(profileDir)) continue;
            stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        } catch { continue; }
        const type = (/--type=([a-z-]+)/.exec(cmd) || [null, 'browser'])[1];
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        out[type] = (out[type] || 0) + (Number(f[11]) + Number(f[12])) / tick;
    }
    return out;
}

(async () => {
    const n = parseInt(process.argv[2] || process.env.BENCH_TERRAIN || '224', 10);
    const frames = parseInt(process.argv[3] || process.env.BENCH_FRAMES || '240', 10);
    fs.mkdirSync(H.ARTIFACTS, { recursive: true });
    const srv = await H.startServer(['--max-body', String(64 << 20)]);
    let b;
    try {
        const api = H.client(srv.url);
        const level = H.terrainLevel(n);
        const t0 = Date.now();
        await api('PUT', '/v1/maps/terrain', level.text, 'model/obj');
        const buildMs = Date.now() - t0;
        // BENCH_VIEWPORT=WxH: the browser window (the canvas follows it).
        const vp = /^(\d+)x(\d+)$/.exec(process.env.BENCH_VIEWPORT || '1280x900');
        b = await H.launch({ width: Number(vp[1]), height: Number(vp[2]) });
        const page = await openViewer(b.context, srv.url);
        const beforeRev = process.env.BENCH_BEFORE;
        if (beforeRev) {
            // Side by side: blocks of frames alternating between the two pages.
            const old = await openViewer(b.context, srv.url, pageAt(beforeRev));
            const tb = [], ta = [], block = Math.max(10, Math.floor(frames / 8));
            for (let i = 0; i < 8; i++) {
                tb.push(...await old.evaluate((nf) => window.pathdViewer.nav.benchFrames(nf), block));
                ta.push(...await page.evaluate((nf) => window.pathdViewer.nav.benchFrames(nf), block));
            }
            const mb = median(tb), ma = median(ta);
            console.log(`bench-viewer: side by side, ${tb.length} frames each in alternating blocks of ${block}: ` +
                `before (${beforeRev}) median ${mb.toFixed(1)} ms, after (this tree) median ${ma.toFixed(1)} ms: ` +
                `after/before ${(ma / mb).toFixed(3)}; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
            await old.close();
        }
        const cpu0 = chromiumCpu(b.context.profileDir);
        const r = await page.evaluate((nf) => {
            const nav = window.pathdViewer.nav;
            const times = nav.benchFrames(nf);
            return { times, triangles: nav.state.R.draw(nav.M(), true), canvas: [nav.state.cv.width, nav.state.cv.height], lod: nav.lod,
                mesh: nav.state.mesh.counts, input: nav.state.mesh.input.triangles.length / 3,
                renderer: (() => { const gl = nav.state.R.gl, d = gl.getExtension('WEBGL_debug_renderer_info'); return d ? gl.getParameter(d.UNMASKED_RENDERER_WEBGL) : '?'; })() };
        }, frames);
        const cpu1 = chromiumCpu(b.context.profileDir), cpu = {};
        for (const k of Object.keys(cpu1)) cpu[k] = (1000 * (cpu1[k] - (cpu0[k] || 0))) / frames;
        // The same orbit once more at full detail (what a still camera's
        // frame costs: drawn once when the camera stops).
        const stillFrames = Math.max(20, Math.floor(frames / 4));
        const still = await page.evaluate((nf) => {
            const nav = window.pathdViewer.nav;
            return { times: nav.benchFrames(nf, true), triangles: nav.state.R.draw(nav.M(), false) };
        }, stillFrames);
        const s = [...r.times].sort((a, c) => a - c), q = (f) => s[Math.min(s.length - 1, Math.floor(f * s.length))];
        const out = { level: `terrain ${n}x${n}`, input_triangles: r.input, navmesh: r.mesh, triangles_drawn: r.triangles,
            canvas: r.canvas, frames: s.length, median_ms: q(0.5), p95_ms: q(0.95), max_ms: s[s.length - 1],
            fps_at_median: 1000 / q(0.5), lod: r.lod, load_average: os.loadavg(), cpus: os.cpus().length, renderer: r.renderer,
            cpu_ms_per_frame: cpu, upload_and_build_ms: buildMs, times: r.times,
            full_detail: { triangles_drawn: still.triangles, frames: still.times.length, median_ms: median(still.times), times: still.times } };
        fs.writeFileSync(path.join(H.ARTIFACTS, 'bench-viewer.json'), JSON.stringify(out, null, 1));
        await page.screenshot({ path: path.join(H.ARTIFACTS, 'bench-viewer.png') });
        console.log(`bench-viewer: ${out.level}, ${r.input} input triangles + ${r.mesh.triangles} navmesh surface triangles ` +
            `= ${still.triangles} triangles at full detail, ${r.triangles} drawn a frame while the camera moves ` +
            `at ${r.lod.scale} of the resolution (plus ${r.mesh.polygons} polygons' edges), ${r.canvas.join('x')} px, ${r.renderer}`);
        console.log(`bench-viewer: ${out.frames} orbit frames drawn and read back: median ${out.median_ms.toFixed(1)} ms ` +
            `(${out.fps_at_median.toFixed(0)} fps), p95 ${out.p95_ms.toFixed(1)} ms, max ${out.max_ms.toFixed(1)} ms; ` +
            `load average ${out.load_average.map((x) => x.toFixed(1)).join(' ')} on ${out.cpus} cores ` +
            `(build/browser/bench-viewer.json)`);
        console.log(`bench-viewer: the same orbit at full detail (the frame drawn when the camera stops), ${still.times.length} frames: ` +
            `median ${median(still.times).toFixed(1)} ms (${(1000 / median(still.times)).toFixed(0)} fps)`);
        const cpuSum = Object.values(cpu).reduce((a, c) => a + c, 0);
        console.log(`bench-viewer: CPU a frame (user + system, /proc): ${Object.entries(cpu).map(([k, v]) => `${k} ${v.toFixed(1)} ms`).join(', ')}; ` +
            `${cpuSum.toFixed(1)} ms in all: what a frame costs without the machine's other work`);
    } finally {
        await H.close(b);
        await H.stopServer(srv);
    }
})().catch((e) => { console.error(e); process.exit(1); });
