#!/usr/bin/env node
// compare.js -- the JavaScript side of the pathd comparison: npm `pathfinding`
// (PathFinding.js) AStarFinder on Moving AI scenario files.
//
//   node compare.js [--max-queries N] [--min-bucket-frac F] [--clone] [--json] FILE.scen...
//
// Settings, chosen to answer the same question as pathd's astar:
// - diagonalMovement OnlyWhenNoObstacles: a diagonal step needs both
//   orthogonal cells it passes walkable (Grid.getNeighbors: d0 = s3 && s0),
//   which is the Moving AI "no corner cutting" rule of the scenario files;
// - heuristic octile, the admissible and consistent heuristic for sqrt(2)
//   diagonals (AStarFinder's doc comment says the default is manhattan, which
//   would overestimate and return non-optimal paths; 0.4.18 switches to
//   octile when diagonals are allowed, we set it explicitly either way);
// - step costs 1 and sqrt(2), as AStarFinder computes them.
// The grid is reset between queries (every node's search fields cleared,
// or a fresh grid.clone() with --clone), outside the timed region. Each
// query is timed with process.hrtime around findPath alone, after one untimed
// warm-up query per map (the longest selected), as pathd-bench does.
//
// The queries are selected with pathd-bench's rule, so both run the same ones:
// keep buckets >= floor(F x (largest bucket + 1)), then at most N entries,
// entry floor(k*n/N) for k = 0..N-1.
'use strict';

const fs = require('fs');
const path = require('path');
const PF = require('pathfinding');

function usage(out) {
    out.write('usage: node compare.js [--max-queries N] [--min-bucket-frac F] [--clone] [--json] FILE.scen...\n');
}

function parseArgs(argv) {
    const o = { maxQueries: 0, minBucketFrac: 0, clone: false, json: false, files: [] };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (a === '--max-queries') o.maxQueries = parseInt(argv[++i], 10);
        else if (a === '--min-bucket-frac') o.minBucketFrac = parseFloat(argv[++i]);
        else if (a === '--bucket-quarter') o.minBucketFrac = 0.75;
        else if (a === '--clone') o.clone = true;
        else if (a === '--json') o.json = true;
        else if (a === '--help' || a === '-h') { usage(process.stdout); process.exit(0); }
        else if (a.startsWith('--')) { usage(process.stderr); process.exit(2); }
        else o.files.push(a);
    }
    if (!o.files.length || !(o.maxQueries >= 0) || !(o.minBucketFrac >= 0 && o.minBucketFrac < 1)) {
        usage(process.stderr);
        process.exit(2);
    }
    return o;
}

// Moving AI .map: header then rows; '.', 'G', 'S' walkable.
function readMap(file) {
    const lines = fs.readFileSync(file, 'latin1').split(/\r?\n/);
    let i = 0, w = 0, h = 0;
    for (; i < lines.length; i++) {
        const l = lines[i].trim();
        if (l.startsWith('height')) h = parseInt(l.split(/\s+/)[1], 10);
        else if (l.startsWith('width')) w = parseInt(l.split(/\s+/)[1], 10);
        else if (l === 'map') { i++; break; }
    }
    const matrix = [];
    for (let y = 0; y < h; y++) {
        const row = lines[i + y];
        if (row === undefined || row.length < w) throw new Error(`${file}: row ${y} too short`);
        const r = new Array(w);
        for (let x = 0; x < w; x++) {
            const c = row[x];
            r[x] = (c === '.' || c === 'G' || c === 'S') ? 0 : 1;
        }
        matrix.push(r);
    }
    return { w, h, matrix };
}

function readScen(file) {
    const lines = fs.readFileSync(file, 'latin1').split(/\r?\n/);
    const entries = [];
    let mapField = null;
    for (let i = 1; i < lines.length; i++) {
        const f = lines[i].trim().split(/\s+/);
        if (f.length < 9) continue;
        if (mapField === null) mapField = f[1];
        entries.push({
            bucket: parseInt(f[0], 10),
            sx: parseInt(f[4], 10), sy: parseInt(f[5], 10),
            gx: parseInt(f[6], 10), gy: parseInt(f[7], 10),
            optimal: parseFloat(f[8]),
        });
    }
    return { mapField, entries };
}

function select(entries, maxQueries, minBucketFrac) {
    let maxb = 0;
    for (const e of entries) if (e.bucket > maxb) maxb = e.bucket;
    const minb = minBucketFrac > 0 ? Math.floor(minBucketFrac * (maxb + 1)) : 0;
    const kept = entries.filter((e) => e.bucket >= minb);
    const n = kept.length;
    const keep = maxQueries && maxQueries < n ? maxQueries : n;
    if (keep === n) return kept;
    const out = [];
    for (let k = 0; k < keep; k++) out.push(kept[Math.floor((k * n) / keep)]);
    return out;
}

function resetGrid(grid) {
    const nodes = grid.nodes;
    for (let y = 0; y < grid.height; y++) {
        const row = nodes[y];
        for (let x = 0; x < grid.width; x++) {
            const nd = row[x];
            nd.g = 0; nd.h = 0; nd.f = 0;
            nd.opened = false; nd.closed = false; nd.parent = null;
        }
    }
}

// The path's cost with 1 / sqrt(2) steps; NaN when a step is not a move.
function pathCost(p) {
    let c = 0;
    for (let i = 1; i < p.length; i++) {
        const dx = Math.abs(p[i][0] - p[i - 1][0]), dy = Math.abs(p[i][1] - p[i - 1][1]);
        if (dx > 1 || dy > 1 || dx + dy === 0) return NaN;
        c += dx + dy === 2 ? Math.SQRT2 : 1;
    }
    return c;
}

function percentile(sorted, p) {
    if (!sorted.length) return NaN;
    let rank = Math.ceil((p / 100) * sorted.length);
    if (rank < 1) rank = 1;
    if (rank > sorted.length) rank = sorted.length;
    return sorted[rank - 1];
}

function runFile(file, o) {
    const scen = readScen(file);
    const mapFile = path.join(path.dirname(file), path.basename(scen.mapField));
    const map = readMap(mapFile);
    const base = new PF.Grid(map.w, map.h, map.matrix);
    const finder = new PF.AStarFinder({
        diagonalMovement: PF.DiagonalMovement.OnlyWhenNoObstacles,
        heuristic: PF.Heuristic.octile,
    });
    const sel = select(scen.entries, o.maxQueries, o.minBucketFrac);
    let grid = o.clone ? base.clone() : base;
    const fresh = () => { if (o.clone) grid = base.clone(); else resetGrid(grid); };

    if (sel.length) { // warm-up, untimed
        const e = sel[sel.length - 1];
        fresh();
        finder.findPath(e.sx, e.sy, e.gx, e.gy, grid);
    }
    const samples = [];
    let mismatches = 0, total = 0;
    for (const e of sel) {
        fresh();
        const t0 = process.hrtime.bigint();
        const p = finder.findPath(e.sx, e.sy, e.gx, e.gy, grid);
        const t1 = process.hrtime.bigint();
        const us = Number(t1 - t0) / 1000;
        samples.push(us);
        total += us;
        const cost = p.length ? pathCost(p) : NaN;
        if (!(Math.abs(cost - e.optimal) <= Math.max(1e-3, 1e-5 * e.optimal))) mismatches++;
    }
    samples.sort((a, b) => a - b);
    let name = path.basename(file);
    name = name.replace(/\.map\.scen$/, '').replace(/\.scen$/, '');
    return {
        map: name,
        impl: 'pathfinding.js ' + require('pathfinding/package.json').version,
        algorithm: 'AStarFinder',
        queries: sel.length,
        mismatches,
        p50_us: percentile(samples, 50),
        p99_us: percentile(samples, 99),
        mean_us: sel.length ? total / sel.length : NaN,
    };
}

function main() {
    const o = parseArgs(process.argv.slice(2));
    let bad = 0;
    if (!o.json) {
        console.log(`${'map'.padEnd(16)} ${'queries'.padStart(8)} ${'mism'.padStart(5)} ` +
                    `${'p50_us'.padStart(10)} ${'p99_us'.padStart(10)} ${'mean_us'.padStart(10)}`);
    }
    for (const f of o.files) {
        const r = runFile(f, o);
        bad += r.mismatches;
        if (o.json) console.log(JSON.stringify(r));
        else {
            console.log(`${r.map.padEnd(16)} ${String(r.queries).padStart(8)} ` +
                        `${String(r.mismatches).padStart(5)} ${r.p50_us.toFixed(1).padStart(10)} ` +
                        `${r.p99_us.toFixed(1).padStart(10)} ${r.mean_us.toFixed(1).padStart(10)}`);
        }
    }
    process.exit(bad ? 1 : 0);
}

main();
