#!/usr/bin/env node
// check.js -- deploy/grafana/pathd-dashboard.json held against a real
// /metrics scrape, so the dashboard cannot query a metric pathd does not
// export (or drift when one is renamed).
//
//   node tests/dashboard/check.js DASHBOARD METRICS [--promtool PATH]
//
// METRICS is the exposition tests/test_metrics.c saved (PATHD_METRICS_OUT)
// after driving every kind of event. Checks:
// - the dashboard is well-formed JSON with a title, uid, schemaVersion, a
//   Prometheus data source variable, and panels whose ids are unique and
//   whose grid positions fit the 24 columns without overlapping;
// - every non-row panel has targets with unique refIds and an expression,
//   and uses the data source variable;
// - every metric an expression names is a sample name of the scrape, every
//   label an expression matches on or groups by is a label of one of the
//   metrics it names (le for histogram buckets);
// - every pathd_* family of the scrape is on the dashboard (a new metric
//   gets a panel);
// - with --promtool, every expression parses as PromQL: they are written
//   as recording rules to a temporary file and `promtool check rules` reads
//   it (Grafana's $__rate_interval and $instance substituted first).
// Exit status 1 with every problem listed.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const args = process.argv.slice(2);
let promtool = null;
const files = [];
for (let i = 0; i < args.length; i++) {
    if (args[i] === '--promtool') promtool = args[++i];
    else files.push(args[i]);
}
if (files.length !== 2) {
    console.error('usage: check.js DASHBOARD METRICS [--promtool PATH]');
    process.exit(2);
}
const [dashFile, metricsFile] = files;
const problems = [];
const bad = (msg) => problems.push(msg);

// ---- the scrape: sample names and their label names; families ----
const samples = new Map(); // name -> Set of label names
const families = new Map(); // family -> type
for (const line of fs.readFileSync(metricsFile, 'utf8').split('\n')) {
    let m;
    if ((m = /^# TYPE (\S+) (\S+)$/.exec(line))) {
        families.set(m[1], m[2]);
        continue;
    }
    if (!line || line.startsWith('#')) continue;
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? \S+$/.exec(line);
    if (!m) {
        bad(`metrics: unreadable sample line '${line}'`);
        continue;
    }
    if (!samples.has(m[1])) samples.set(m[1], new Set());
    const labels = samples.get(m[1]);
    for (const kv of (m[3] || '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"/g))
        labels.add(kv[1]);
}
if (samples.size === 0) bad(`metrics: no samples in ${metricsFile}`);

// ---- the dashboard's shape ----
let dash;
try {
    dash = JSON.parse(fs.readFileSync(dashFile, 'utf8'));
} catch (e) {
    console.error(`${dashFile}: not JSON: ${e.message}`);
    process.exit(1);
}
for (const k of ['title', 'uid']) if (typeof dash[k] !== 'string' || !dash[k]) bad(`dashboard: no ${k}`);
if (!Number.isInteger(dash.schemaVersion)) bad('dashboard: schemaVersion must be an integer');
if (!Array.isArray(dash.panels) || dash.panels.length === 0) bad('dashboard: no panels');
const vars = (dash.templating && dash.templating.list) || [];
const dsVar = vars.find((v) => v.type === 'datasource' && v.query === 'prometheus');
if (!dsVar) bad('dashboard: no Prometheus data source variable');
const dsRef = dsVar ? '${' + dsVar.name + '}' : null;

const panels = [];
for (const p of dash.panels || []) {
    panels.push(p);
    for (const q of p.panels || []) panels.push(q); // collapsed rows keep theirs inside
}
const ids = new Set();
const cells = new Map();
for (const p of panels) {
    const where = `panel ${p.id} '${p.title}'`;
    if (!Number.isInteger(p.id) || ids.has(p.id)) bad(`${where}: id missing or not unique`);
    ids.add(p.id);
    if (typeof p.type !== 'string' || typeof p.title !== 'string' || !p.title) bad(`${where}: type and title`);
    const g = p.gridPos || {};
    if (![g.h, g.w, g.x, g.y].every(Number.isInteger) || g.w < 1 || g.h < 1 || g.x < 0 || g.x + g.w > 24)
        bad(`${where}: gridPos ${JSON.stringify(g)} does not fit 24 columns`);
    else
        for (let y = g.y; y < g.y + g.h; y++)
            for (let x = g.x; x < g.x + g.w; x++) {
                const k = `${x},${y}`;
                if (cells.has(k)) bad(`${where}: overlaps panel ${cells.get(k)} at ${k}`);
                cells.set(k, p.id);
            }
    if (p.type === 'row') continue;
    if (!p.datasource || p.datasource.uid !== dsRef) bad(`${where}: datasource must be ${dsRef}`);
    if (!Array.isArray(p.targets) || p.targets.length === 0) bad(`${where}: no targets`);
    const refs = new Set();
    for (const t of p.targets || []) {
        if (refs.has(t.refId)) bad(`${where}: refId ${t.refId} twice`);
        refs.add(t.refId);
        if (typeof t.expr !== 'string' || !t.expr.trim()) bad(`${where}: target ${t.refId} has no expr`);
    }
}

// ---- the expressions ----
// Functions, aggregations and keywords of PromQL, which are not metrics.
const KEYWORDS = new Set(
    (
        'sum min max avg group stddev stdvar count count_values bottomk topk quantile ' +
        'by without on ignoring group_left group_right bool offset and or unless atan2 ' +
        'abs absent absent_over_time ceil changes clamp clamp_max clamp_min day_of_month ' +
        'day_of_week day_of_year days_in_month delta deriv exp floor histogram_quantile ' +
        'histogram_count histogram_sum histogram_fraction holt_winters hour idelta increase ' +
        'irate label_join label_replace ln log2 log10 minute month predict_linear rate resets ' +
        'round scalar sgn sort sort_desc sqrt time timestamp vector year avg_over_time ' +
        'min_over_time max_over_time sum_over_time count_over_time quantile_over_time ' +
        'stddev_over_time stdvar_over_time last_over_time present_over_time inf nan'
    ).split(' ')
);
const GRAFANA = { '$__rate_interval': '5m', '$__interval': '1m', '$__range': '1h', '$instance': '.*' };

function substitute(expr) {
    let out = expr;
    for (const [k, v] of Object.entries(GRAFANA)) out = out.split(k).join(v);
    if (/\$/.test(out)) bad(`expr '${expr}': an unknown Grafana variable`);
    return out;
}

const used = new Set();
const exprs = [];
for (const p of panels) {
    for (const t of p.targets || []) {
        if (typeof t.expr !== 'string') continue;
        const where = `panel ${p.id} '${p.title}' ${t.refId}`;
        const e = substitute(t.expr);
        exprs.push({ where, expr: e });
        // Label names in matchers, then the matchers and strings removed.
        const matched = [];
        let rest = e.replace(/\{([^}]*)\}/g, (_, inner) => {
            for (const m of inner.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"/g))
                matched.push(m[1]);
            return ' ';
        });
        rest = rest.replace(/"(?:[^"\\]|\\.)*"/g, ' ').replace(/\[[^\]]*\]/g, ' ');
        // Label lists of by/without/on/ignoring/group_left/group_right.
        const grouped = [];
        rest = rest.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_, kw, list) => {
            for (const l of list.split(',').map((s) => s.trim()).filter(Boolean)) grouped.push(l);
            return ' ';
        });
        const metrics = [];
        for (const m of rest.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
            const id = m[0];
            if (KEYWORDS.has(id.toLowerCase())) continue;
            if (/^[0-9]/.test(id)) continue;
            metrics.push(id);
        }
        if (metrics.length === 0) bad(`${where}: names no metric`);
        const labelsOf = new Set();
        for (const name of metrics) {
            used.add(name);
            if (!samples.has(name)) bad(`${where}: metric '${name}' is not in /metrics`);
            else for (const l of samples.get(name)) labelsOf.add(l);
        }
        labelsOf.add('instance'); // added by the scrape
        labelsOf.add('job');
        for (const l of [...matched, ...grouped])
            if (!labelsOf.has(l)) bad(`${where}: label '${l}' is not a label of ${metrics.join(', ')}`);
    }
}

// Every pathd family is on the dashboard.
const histogramParts = ['_bucket', '_sum', '_count'];
for (const [fam, type] of families) {
    if (!fam.startsWith('pathd_')) continue;
    const names = type === 'histogram' ? histogramParts.map((s) => fam + s) : [fam];
    if (!names.some((n) => used.has(n))) bad(`family '${fam}' is on no panel`);
}

// PromQL syntax, by promtool.
if (promtool && exprs.length) {
    const rules = {
        groups: [{ name: 'dashboard', rules: exprs.map((x, i) => ({ record: `dashboard:expr_${i}`, expr: x.expr })) }],
    };
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pathd-dash-'));
    const file = path.join(dir, 'rules.yml');
    fs.writeFileSync(file, JSON.stringify(rules, null, 1)); // JSON is YAML
    try {
        execFileSync(promtool, ['check', 'rules', file], { stdio: 'pipe' });
    } catch (e) {
        bad(`promtool check rules: ${(e.stdout || '') + (e.stderr || '')}`);
        // Name the expressions one by one for the message.
        exprs.forEach((x, i) => {
            const one = path.join(dir, `one-${i}.yml`);
            fs.writeFileSync(one, JSON.stringify({ groups: [{ name: 'x', rules: [{ record: 'x:y', expr: x.expr }] }] }));
            try {
                execFileSync(promtool, ['check', 'rules', one], { stdio: 'pipe' });
            } catch (e2) {
                bad(`${x.where}: '${x.expr}' does not parse`);
            }
        });
    }
    fs.rmSync(dir, { recursive: true, force: true });
}

if (problems.length) {
    for (const p of problems) console.error(`dashboard: ${p}`);
    console.error(`dashboard: ${problems.length} problem(s) in ${dashFile}`);
    process.exit(1);
}
console.log(
    `dashboard: ${panels.length} panels, ${exprs.length} queries over ${used.size} metrics, all in /metrics` +
        (promtool ? ', PromQL checked by promtool' : '')
);
