#!/usr/bin/env node
// check-answers.js -- every answer the integration suites received, held
// against proto/openapi.yaml, so the spec and the server cannot drift.
//
//   node tests/spec/check-answers.js proto/openapi.yaml LOG...
//
// LOG is what tests/httpc.c and tests/wsc.c append when PATHD_SPEC_LOG is
// set (`make test` sets it): records of one JSON line
// {"kind","method","target","status","head","body_len"}, body_len bytes of
// body and a newline. For each record:
//
// - The target (query string dropped) must match a path of the spec, and the
//   method (HEAD as GET) one of its operations. Two answers come before
//   routing and so belong to no operation: a path outside the spec is 404
//   not_found (400 invalid_map_id for a bad map id), a known path with
//   another method is 405 method_not_allowed with Allow; their bodies are
//   checked against components.responses NotFound, BadRequest and
//   MethodNotAllowed. While the server drains, every route may answer 503
//   shutting_down (the spec's Conventions say so), checked against
//   Unavailable. The other answers the Conventions place before any route
//   are checked against their components.responses wherever they come:
//   400 malformed_request, 501 not_implemented, 421 host_not_allowed, 503
//   not_ready, a CORS preflight's 204 to OPTIONS, and 401 / 403 on a path
//   or method without an operation (an operation that needs a token lists
//   its own).
// - The status must be one the operation lists; the Content-Type one that
//   response lists (a response without content must have an empty body);
//   headers marked `required: true` must be there.
// - A JSON body must parse and validate (ajv, every error reported) against
//   the response's schema, with one rule added: an object schema that lists
//   `properties` and says nothing of `additionalProperties` is closed, so a
//   field the server writes and the spec does not name is a mismatch too.
// - WebSocket text messages (kind "ws") are validated against the
//   `x-pathd-messages` schema of the stream operation's 101 response.
//
// Answers libmicrohttpd writes itself (an HTML page for a request it could
// not parse: it never reaches pathd's router) are counted apart and not
// validated. Exit status 1 on any mismatch, unmatched route or unreadable
// log; the summary lists every operation and status seen.
'use strict';

const fs = require('fs');
const YAML = require('yaml');
const Ajv = require('ajv');

function usage() {
    console.error('usage: check-answers.js SPEC LOG...');
    process.exit(2);
}

const [specFile, ...logFiles] = process.argv.slice(2);
if (!specFile || logFiles.length === 0) usage();
const spec = YAML.parse(fs.readFileSync(specFile, 'utf8'));

// ---- schemas ----

// Rewrites the spec's '#/components/schemas/X' to the registered copy and
// closes object schemas (see above).
function prepare(node) {
    if (Array.isArray(node)) return node.map(prepare);
    if (!node || typeof node !== 'object') return node;
    const out = {};
    for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/'))
            out[k] = 'pathd#/$defs/' + v.slice('#/components/schemas/'.length);
        else if (k === 'properties' || k === '$defs')
            out[k] = Object.fromEntries(Object.entries(v).map(([n, s]) => [n, prepare(s)]));
        else out[k] = prepare(v);
    }
    if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
    return out;
}

const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
ajv.addKeyword({ keyword: 'example' });
ajv.addSchema({ $id: 'pathd', $defs: prepare(spec.components.schemas || {}) });

const compiled = new Map();
function validator(schema) {
    if (!compiled.has(schema)) compiled.set(schema, ajv.compile(prepare(schema)));
    return compiled.get(schema);
}

function deref(obj) {
    let seen = 0;
    while (obj && obj.$ref) {
        if (++seen > 16) throw new Error('$ref loop at ' + obj.$ref);
        const parts = obj.$ref.replace(/^#\//, '').split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
        obj = parts.reduce((o, p) => (o ? o[p] : undefined), spec);
    }
    return obj;
}

// ---- routes ----

const routes = Object.keys(spec.paths).map((p) => {
    const names = [];
    const re = new RegExp('^' + p.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([^}]+)\}/g, (m, n) => {
        names.push(n);
        return '([^/]+)';
    }).replace(/\\\{|\\\}/g, '') + '$');
    return { path: p, re, names, item: spec.paths[p] };
});
// Literal paths before templates, then fewer parameters first.
routes.sort((a, b) => a.names.length - b.names.length);

function matchRoute(path) {
    for (const r of routes) if (r.re.test(path)) return r;
    return null;
}

// ---- the log ----

function* records(file) {
    const buf = fs.readFileSync(file);
    let off = 0;
    while (off < buf.length) {
        const nl = buf.indexOf(0x0a, off);
        if (nl < 0) throw new Error(`${file}: truncated record header at byte ${off}`);
        const hdr = JSON.parse(buf.subarray(off, nl).toString('utf8'));
        const start = nl + 1, end = start + hdr.body_len;
        if (end + 1 > buf.length || buf[end] !== 0x0a)
            throw new Error(`${file}: record at byte ${off} is cut short`);
        hdr.body = buf.subarray(start, end);
        hdr.offset = off;
        yield hdr;
        off = end + 1;
    }
}

function header(head, name) {
    const lines = (head || '').split('\r\n').slice(1);
    for (const l of lines) {
        const c = l.indexOf(':');
        if (c > 0 && l.slice(0, c).trim().toLowerCase() === name.toLowerCase()) return l.slice(c + 1).trim();
    }
    return null;
}

function mediaType(ct) {
    return ct ? ct.split(';')[0].trim().toLowerCase() : null;
}

// ---- checks ----

const failures = [];
const failureCount = new Map(); // the first record of each distinct failure is kept
const seen = new Map(); // "METHOD path status" -> count
let checked = 0, mhdOwn = 0;

// One line per distinct (route, status, reason), with the first record's
// target and body and how often it happened.
function fail(rec, what) {
    const route = matchRoute(rec.target.split('?')[0]);
    const key = `${rec.method} ${route ? route.path : rec.target} ${rec.status}${rec.kind === 'ws' ? ' ws' : ''}: ${what}`;
    if (failureCount.has(key)) return failureCount.set(key, failureCount.get(key) + 1);
    failureCount.set(key, 1);
    const body = rec.body.toString('utf8');
    failures.push({ key, text: `${rec.method} ${rec.target} -> ${rec.status}${rec.kind === 'ws' ? ' (ws message)' : ''}: ${what}\n` +
                  `    body: ${body.length > 300 ? body.slice(0, 300) + '...' : body}` });
}

// ajv's errors, array indexes folded (/results/* for every slot), each
// distinct one once, at most 6.
function schemaErrors(errors) {
    const msgs = [...new Set(errors.map((e) => `${(e.instancePath || '/').replace(/\/\d+/g, '/*')} ${e.message}` +
        (e.params && e.params.additionalProperty ? ` '${e.params.additionalProperty}'` : '') +
        (e.params && e.params.allowedValues ? ` ${JSON.stringify(e.params.allowedValues)}` : '')))];
    return msgs.slice(0, 6).join('; ') + (msgs.length > 6 ? `; ... (${msgs.length - 6} more)` : '');
}

function count(key) {
    seen.set(key, (seen.get(key) || 0) + 1);
}

// Checks a body against one response object; returns an error or null.
function checkResponse(rec, resp, isHead) {
    resp = deref(resp);
    for (const [name, h] of Object.entries(resp.headers || {})) {
        if (deref(h).required && header(rec.head, name) === null)
            return `required header ${name} is missing`;
    }
    const ctype = mediaType(header(rec.head, 'Content-Type'));
    if (!resp.content) {
        if (rec.body.length && !isHead) return `the spec has no body here, got ${rec.body.length} bytes (${ctype})`;
        return null;
    }
    const media = resp.content[ctype];
    if (!media) return `Content-Type ${ctype} is not one of ${Object.keys(resp.content).join(', ')}`;
    if (isHead) return null;
    if (ctype === 'application/json') {
        let value;
        try {
            value = JSON.parse(rec.body.toString('utf8'));
        } catch (e) {
            return `not JSON: ${e.message}`;
        }
        if (!media.schema) return 'the spec gives this JSON answer no schema';
        const v = validator(media.schema);
        if (!v(value)) return 'schema: ' + schemaErrors(v.errors);
    }
    return null;
}

function checkHttp(rec) {
    const path = rec.target.split('?')[0];
    const method = rec.method === 'HEAD' ? 'get' : rec.method.toLowerCase();
    const isHead = rec.method === 'HEAD';
    const ctype = mediaType(header(rec.head, 'Content-Type'));
    if (ctype === 'text/html' && rec.status >= 400 && !/"error"/.test(rec.body.toString('utf8'))) {
        // libmicrohttpd's own page for a request it refused to parse.
        mhdOwn++;
        count(`(libmicrohttpd) ${rec.status}`);
        return;
    }
    const drain = rec.status === 503 && /"shutting_down"/.test(rec.body.toString('utf8'));
    const route = matchRoute(path);
    const text = rec.body.toString('utf8');
    const early = [
        [400, 'malformed_request', 'MalformedRequest'],
        [414, 'uri_too_long', 'UriTooLong'],
        [501, 'not_implemented', 'NotImplemented'],
        [421, 'host_not_allowed', 'HostNotAllowed'],
        [503, 'not_ready', 'NotReady'],
    ].find(([st, code]) => rec.status === st && text.includes(`"code":"${code}"`));
    // 401 and 403 are each operation's (those that need a token list them);
    // a path without an operation answers 401 before its 404 or 405.
    const op0 = route && route.item[method];
    const earlyAuth = !op0 && [401, 403].includes(rec.status);
    let resp, key;
    if (drain) {
        key = `${rec.method} ${route ? route.path : '(any)'} 503 draining`;
        resp = spec.components.responses.Unavailable;
    } else if (early) {
        key = `(before routing) ${rec.status} ${early[1]}`;
        resp = spec.components.responses[early[2]];
    } else if (earlyAuth) {
        key = `(before routing) ${rec.status}`;
        resp = spec.components.responses[rec.status === 401 ? 'Unauthorized' : 'Forbidden'];
    } else if (rec.method === 'OPTIONS' && rec.status === 204) {
        key = '(before routing) 204 CORS preflight';
        resp = spec.components.responses.CorsPreflight;
    } else if (!route) {
        key = `(no route) ${rec.status}`;
        if (rec.status === 404) resp = spec.components.responses.NotFound;
        else if (rec.status === 400) resp = spec.components.responses.BadRequest;
        else return fail(rec, `no path of the spec matches ${path}`), count(key);
    } else if (!route.item[method]) {
        key = `${rec.method} ${route.path} ${rec.status} (no such operation)`;
        if (rec.status !== 405) return fail(rec, `the spec has no ${rec.method} on ${route.path}`), count(key);
        resp = spec.components.responses.MethodNotAllowed;
    } else {
        const op = route.item[method];
        key = `${op.operationId} ${rec.status}`;
        resp = op.responses[String(rec.status)] || op.responses[String(rec.status)[0] + 'XX'] || op.responses.default;
        if (!resp) return fail(rec, `status ${rec.status} is not among ${Object.keys(op.responses).join(', ')} of ${op.operationId}`), count(key);
    }
    count(key);
    const err = checkResponse(rec, resp, isHead);
    if (err) fail(rec, err);
}

function checkWs(rec) {
    const route = matchRoute(rec.target.split('?')[0]);
    const op = route && route.item.get;
    const resp = op && deref(op.responses['101']);
    const msg = resp && resp['x-pathd-messages'];
    count(`${op ? op.operationId : '(no route)'} ws message`);
    if (!msg) return fail(rec, 'no stream operation with x-pathd-messages matches this target');
    let value;
    try {
        value = JSON.parse(rec.body.toString('utf8'));
    } catch (e) {
        return fail(rec, `not JSON: ${e.message}`);
    }
    const v = validator(msg.schema);
    if (!v(value)) fail(rec, 'schema: ' + schemaErrors(v.errors));
}

for (const file of logFiles) {
    let n = 0;
    try {
        for (const rec of records(file)) {
            n++;
            checked++;
            if (rec.kind === 'ws') checkWs(rec);
            else checkHttp(rec);
        }
    } catch (e) {
        failures.push({ key: file, text: `${file}: ${e.message}` });
    }
    if (n === 0) failures.push({ key: file, text: `${file}: no answers logged (was PATHD_SPEC_LOG set for the suites?)` });
}

const ops = [];
for (const r of routes)
    for (const [m, op] of Object.entries(r.item))
        if (op && op.operationId) ops.push([op.operationId, m.toUpperCase(), r.path]);
const exercised = new Set([...seen.keys()].map((k) => k.split(' ')[0]));
const unseen = ops.filter(([id]) => !exercised.has(id)).map(([id, m, p]) => `${id} (${m} ${p})`);

console.log(`spec-check: ${checked} answers against ${specFile}` + (mhdOwn ? ` (${mhdOwn} written by libmicrohttpd itself, not validated)` : ''));
for (const k of [...seen.keys()].sort()) console.log(`  ${String(seen.get(k)).padStart(5)}  ${k}`);
if (unseen.length) console.log(`  operations no suite called: ${unseen.join(', ')}`);
if (failures.length) {
    const total = [...failureCount.values()].reduce((a, b) => a + b, 0) + failures.length - failureCount.size;
    console.log(`spec-check: ${total} answers do not match (${failures.length} distinct):`);
    for (const f of failures.slice(0, 40))
        console.log(`  ${failureCount.get(f.key) > 1 ? `[${failureCount.get(f.key)}x] ` : ''}${f.text}`);
    if (failures.length > 40) console.log(`  ... and ${failures.length - 40} more`);
    process.exit(1);
}
console.log(`spec-check: every answer matches the spec`);
