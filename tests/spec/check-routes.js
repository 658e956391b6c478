#!/usr/bin/env node
// check-routes.js -- the server's route table (server/routes.h, PF_ROUTES)
// against proto/openapi.yaml, so neither can gain or change a route alone:
//
//   node tests/spec/check-routes.js proto/openapi.yaml server/routes.h
//
// For every row (method, path, bodies, scope) there must be exactly that
// operation in the spec, and every operation of the spec must be a row:
// - the path, with "{id}"/"{sid}"/"{cid}" as in the spec and a trailing "/?" dropped;
// - the request body content types: NONE no requestBody, JSON
//   application/json, QUERY application/json (a request without a
//   Content-Type is read as JSON too), MAP application/json,
//   text/x-movingai-map, text/plain and model/obj, UPDATES
//   application/json and application/x-ndjson;
// - the scope: OPEN `security: []`, READ the root default (a read or a
//   write token), WRITE `security: [{writeToken: []}]`.
// Exit status 1 on any difference, each one printed.
'use strict';

const fs = require('fs');
const YAML = require('yaml');

const [specFile, routesFile] = process.argv.slice(2);
if (!specFile || !routesFile) {
    console.error('usage: check-routes.js SPEC ROUTES_H');
    process.exit(2);
}
const spec = YAML.parse(fs.readFileSync(specFile, 'utf8'));
const text = fs.readFileSync(routesFile, 'utf8');

const rows = [];
const re = /XX\(\s*(\w+),\s*(\w+),\s*(GET|POST|PUT|PATCH|DELETE),\s*"([^"]+)",\s*(\w+),\s*(\w+),\s*(\w+)\s*\)/g;
for (let m; (m = re.exec(text));) {
    rows.push({ route: m[1], method: m[3].toLowerCase(), path: m[4].replace(/\/\?$/, '') || '/', bodies: m[5], scope: m[6] });
}
const problems = [];
if (rows.length === 0) problems.push(`${routesFile}: no PF_ROUTES rows found`);

const bodyTypes = {
    NONE: [],
    JSON: ['application/json'],
    QUERY: ['application/json'],
    MAP: ['application/json', 'model/obj', 'text/plain', 'text/x-movingai-map'],
    UPDATES: ['application/json', 'application/x-ndjson'],
};

function deref(obj) {
    while (obj && obj.$ref) obj = obj.$ref.replace(/^#\//, '').split('/').reduce((o, p) => o[p.replace(/~1/g, '/')], spec);
    return obj;
}

function scopeOf(op) {
    const sec = op.security === undefined ? spec.security : op.security;
    if (!sec || sec.length === 0) return 'OPEN';
    const names = sec.map((r) => Object.keys(r).sort().join('+')).sort().join(',');
    if (names === 'writeToken') return 'WRITE';
    if (names === 'readToken,writeToken') return 'READ';
    return `unknown (${names})`;
}

const seen = new Set();
for (const r of rows) {
    const item = spec.paths[r.path];
    const op = item && item[r.method];
    const where = `${r.route}: ${r.method.toUpperCase()} ${r.path}`;
    if (!op) {
        problems.push(`${where}: the server has this route, the spec does not`);
        continue;
    }
    seen.add(`${r.method} ${r.path}`);
    const want = bodyTypes[r.bodies];
    const rb = deref(op.requestBody);
    const got = rb && rb.content ? Object.keys(rb.content).sort() : [];
    if (!want) problems.push(`${where}: unknown bodies set ${r.bodies}`);
    else if (want.slice().sort().join(',') !== got.join(','))
        problems.push(`${where}: the server reads ${want.join(', ') || 'no body'}, the spec says ${got.join(', ') || 'no body'}`);
    const scope = scopeOf(op);
    if (scope !== r.scope) problems.push(`${where}: scope ${r.scope} in the server, ${scope} in the spec (${op.operationId})`);
}
for (const [p, item] of Object.entries(spec.paths))
    for (const m of ['get', 'post', 'put', 'patch', 'delete'])
        if (item[m] && !seen.has(`${m} ${p}`)) problems.push(`${m.toUpperCase()} ${p}: in the spec (${item[m].operationId}), not in the server's routes`);

if (problems.length) {
    console.log(`check-routes: ${problems.length} differences between ${routesFile} and ${specFile}:`);
    for (const p of problems) console.log('  ' + p);
    process.exit(1);
}
console.log(`check-routes: the ${rows.length} routes of ${routesFile} are the operations of ${specFile}, bodies and scopes alike`);
