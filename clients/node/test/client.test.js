// clients/node against a real pathd: node --test test/ (PATHD_BIN names the
// server binary; each test file starts its own instances on free loopback
// ports with --port 0 and reads the port from the "listening on" line).
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const path = require('node:path');
const {
    Client, ApiError, TimeoutError, TransportError, StreamClosedError, isBatchError,
} = require('../dist/index.js');

const { startServer } = require('../testlib/server.js');

const ROOM = 'type octile\nheight 7\nwidth 10\nmap\n' +
    '....@.....\n'.repeat(5) + '..........\n'.repeat(2);
const DOORS = { rows: ['..#..', '..#..', '.....'], doors: { gate: { cells: [[2, 2]], open: true } } };

// The 503s the server has counted on the route that creates sessions (it
// counts a request once its answer is sent), and the lines it read them from.
async function refused(client) {
    const a = await client.request('GET', '/metrics');
    let n = 0;
    const lines = [];
    for (const line of a.text.split('\n'))
        if (line.startsWith('pathd_requests_total{') && line.includes('status="503"')) {
            lines.push(line);
            if (line.includes('route="sessions_create"')) n += Number(line.slice(line.lastIndexOf(' ') + 1));
        }
    return { n, lines };
}

function adjacent(a, b) {
    return Math.abs(a[0] - b[0]) <= 1 && Math.abs(a[1] - b[1]) <= 1 && !(a[0] === b[0] && a[1] === b[1]);
}

let srv, pathd;
before(async () => {
    srv = await startServer();
    pathd = new Client({ baseUrl: srv.url, timeoutMs: 5000 });
});
after(async () => {
    assert.equal(await srv.stop(), 0, 'pathd exits 0 on SIGTERM');
});

test('maps: put, replace, create by content, get, list, patch, cells round trip, delete', async () => {
    let m = await pathd.putMap('room', ROOM);
    assert.equal(m.created, true);
    assert.equal(m.version, 1);
    assert.equal(m.walkable_cells, 65);
    m = await pathd.putMap('room', ROOM);
    assert.equal(m.created, false);
    assert.equal(m.version, 2);

    const c = await pathd.createMap(DOORS);
    assert.match(c.id, /^m-[0-9a-f]{16}$/);
    assert.equal(c.created, true);
    assert.equal((await pathd.createMap(DOORS)).created, false, 'the same bytes find the same map');

    assert.equal((await pathd.getMap('room')).version, 2);
    const ids = (await pathd.listMaps()).map((x) => x.id);
    assert.deepEqual(ids, [...ids].sort());
    assert.ok(ids.includes('room') && ids.includes(c.id));

    m = await pathd.patchMap(c.id, { cells: [{ x: 0, y: 0, cost: 0 }], doors: [{ id: 'gate', open: false }] });
    assert.equal(m.version, 2);
    assert.equal(m.walkable_cells, 11);
    await assert.rejects(pathd.patchMap(c.id, { doors: [{ id: 'nosuch', open: true }] }),
        (e) => e instanceof ApiError && e.status === 422);

    const cells = await pathd.getMapCells(c.id);
    assert.equal(cells.doors.gate.open, false);
    const copy = await pathd.putMap('copy', cells);
    assert.equal(copy.created, true);
    const again = await pathd.getMapCells('copy');
    assert.deepEqual({ ...again, id: cells.id, version: cells.version }, cells, 'the export uploads back exactly');

    await pathd.deleteMap('copy');
    await assert.rejects(pathd.getMap('copy'),
        (e) => e instanceof ApiError && e.status === 404 && e.code === 'map_not_found');
    await assert.rejects(pathd.getMap('bad id!'), TypeError);
    await assert.rejects(pathd.putMap('bad', 'type octile\n'),
        (e) => e instanceof ApiError && e.status === 400 && e.code === 'malformed_map');
});

test('paths: valid paths, optimal algorithms agree, cache, typed errors, unreachable', async () => {
    await pathd.putMap('room', ROOM);
    const p = await pathd.findPath('room', { start: [0, 0], goal: [9, 0], algorithm: 'astar' });
    assert.equal(p.found, true);
    assert.deepEqual(p.path[0], [0, 0]);
    assert.deepEqual(p.path[p.path.length - 1], [9, 0]);
    for (let i = 1; i < p.path.length; i++) assert.ok(adjacent(p.path[i - 1], p.path[i]), `step ${i}`);
    const raw = await pathd.request('POST', '/v1/maps/room/path', JSON.stringify({ start: [0, 0], goal: [9, 0], algorithm: 'astar' }), 'application/json');
    assert.equal(JSON.parse(raw.text).cost, p.cost, 'the wrapper returns the answer as sent');

    let best;
    for (const algorithm of ['dijkstra', 'astar', 'jps', 'hpa', 'bfs']) {
        const q = await pathd.findPath('room', { start: [0, 0], goal: [9, 6], algorithm });
        assert.equal(q.found, true, algorithm);
        if (best === undefined) best = q.cost;
        assert.ok(q.cost >= best - 1e-9, `${algorithm} beat dijkstra`);
        if (['dijkstra', 'astar', 'jps'].includes(algorithm)) assert.ok(Math.abs(q.cost - best) < 1e-9, `${algorithm} is optimal`);
    }

    await pathd.findPath('room', { start: [1, 0], goal: [9, 0] });
    assert.equal((await pathd.findPath('room', { start: [1, 0], goal: [9, 0] })).stats.cached, true);
    assert.equal((await pathd.findPath('room', { start: [1, 0], goal: [9, 0], cache: false, smooth: true })).stats.cached, false);

    await assert.rejects(pathd.findPath('room', { start: [0, 0], goal: [99, 0] }),
        (e) => e instanceof ApiError && e.status === 422 && e.code === 'off_map' && e.field === 'goal');
    await assert.rejects(pathd.findPath('room', { start: [0, 0], goal: [4, 0] }),
        (e) => e instanceof ApiError && e.code === 'blocked');
    await assert.rejects(pathd.findPath('room', { start: [0, 0], goal: [9, 0], algorithm: 'teleport' }),
        (e) => e instanceof ApiError && e.code === 'invalid_value' && e.field === 'algorithm');
    await assert.rejects(pathd.findPath('nosuch', { start: [0, 0], goal: [1, 0] }),
        (e) => e instanceof ApiError && e.code === 'map_not_found');

    await pathd.putMap('walled', { rows: ['.#.', '.#.', '.#.'] });
    const u = await pathd.findPath('walled', { start: [0, 0], goal: [2, 2] });
    assert.equal(u.found, false);
    assert.equal(u.reason, 'unreachable');
    assert.deepEqual(u.path, []);
});

test('batch: one error slot, the others answered', async () => {
    await pathd.putMap('room', ROOM);
    const b = await pathd.findPaths('room', [
        { start: [0, 0], goal: [9, 6], algorithm: 'dijkstra' },
        { start: [0, 0], goal: [50, 50] },
        { start: [9, 6], goal: [0, 0] },
    ], { deadline_ms: 2000 });
    assert.equal(b.results.length, 3);
    const [a, bad, c] = b.results;
    assert.ok(!isBatchError(a) && a.found);
    assert.ok(isBatchError(bad));
    assert.equal(bad.status, 422);
    assert.equal(bad.error.code, 'off_map');
    assert.equal(bad.error.field, 'queries[1].goal');
    assert.ok(!isBatchError(c) && Math.abs(c.cost - a.cost) < 1e-9, 'a path and its reverse');
});

test('sessions: create, get, JSON and NDJSON updates, a bad line, delete', async () => {
    const m = await pathd.putMap('doors', DOORS);
    const s = await pathd.createSession(m.id, { start: [0, 0], goal: [4, 0], ttl_s: 60 });
    assert.match(s.session_id, /^[0-9a-f]{32}$/);
    assert.equal(s.found, true);
    assert.equal(s.ttl_s, 60);
    assert.equal((await pathd.getSession('doors', s.session_id)).cost, s.cost);

    const shut = await pathd.updateSession('doors', s.session_id, { doors: [{ id: 'gate', open: false }] });
    assert.equal(shut.found, false);
    assert.equal(shut.reason, 'unreachable');
    const nd = await pathd.updateSession('doors', s.session_id, [{ doors: [{ id: 'gate', open: true }] }, { position: [1, 0] }]);
    assert.equal(nd.found, true);
    assert.equal(nd.stats.updates, 2);
    assert.deepEqual(nd.path[0], [1, 0]);
    await assert.rejects(pathd.updateSession('doors', s.session_id, [{ position: [1, 1] }, { position: [40, 0] }]),
        (e) => e instanceof ApiError && e.code === 'off_map' && e.field.startsWith('lines[1]'));

    // A replanning policy on create and on an update (members not sent are kept).
    const r = await pathd.createSession('doors', { start: [0, 0], goal: [4, 0], replan: { goal_threshold: 3, hysteresis: 0.25 } });
    assert.equal(r.replan.reason, 'initial');
    assert.deepEqual(r.replan.policy, { min_interval_ms: 0, min_updates: 0, goal_threshold: 3, hysteresis: 0.25 });
    const near = await pathd.updateSession('doors', r.session_id, { goal: [4, 1] });
    assert.equal(near.replan.reason, 'threshold');
    assert.equal(near.replan.replanned, false);
    assert.equal(near.stats.expanded, 0);
    const pol = await pathd.updateSession('doors', r.session_id, { replan: { goal_threshold: 0 } });
    assert.equal(pol.replan.reason, 'goal_moved');
    assert.equal(pol.replan.replanned, true);
    assert.deepEqual(pol.replan.policy, { min_interval_ms: 0, min_updates: 0, goal_threshold: 0, hysteresis: 0.25 });
    await assert.rejects(pathd.updateSession('doors', r.session_id, { replan: { hysteresis: 5 } }),
        (e) => e instanceof ApiError && e.status === 422 && e.field === 'replan.hysteresis');
    await pathd.deleteSession('doors', r.session_id);

    // Plan limits: a plan of at most 2 expansions stops (node_budget) and
    // each read goes on with it, to the unlimited session's cost.
    const lim = await pathd.createSession('doors', { start: [0, 0], goal: [4, 0], max_expanded: 2 });
    assert.equal(lim.found, false);
    assert.equal(lim.reason, 'node_budget');
    let got = lim;
    for (let reads = 1; !got.found && reads < 100; reads++) got = await pathd.getSession('doors', lim.session_id);
    assert.equal(got.found, true);
    assert.equal(got.cost, s.cost);
    await pathd.deleteSession('doors', lim.session_id);

    await pathd.deleteSession('doors', s.session_id);
    await assert.rejects(pathd.getSession('doors', s.session_id),
        (e) => e instanceof ApiError && e.status === 404 && e.code === 'session_not_found');
});

test('stream: answers in order, errors as values, long messages, refused handshakes', async () => {
    await pathd.putMap('doors', DOORS);
    const s = await pathd.createSession('doors', { start: [0, 0], goal: [4, 0] });
    const ws = await pathd.openStream('doors', s.session_id);
    const [one, two] = await Promise.all([ws.send({ position: [1, 1] }), ws.send({ position: [1, 0] })]);
    assert.deepEqual(one.position, [1, 1]);
    assert.deepEqual(two.position, [1, 0]);
    await assert.rejects(ws.send({ position: [-1, 0] }), (e) => e instanceof ApiError && e.code === 'off_map');
    const many = Array.from({ length: 3000 }, (_, i) => ({ x: 4, y: 2, cost: 1 + (i % 5) }));
    assert.equal((await ws.send({ cells: many })).found, true, 'the stream goes on after an error');
    await ws.close();
    await assert.rejects(pathd.openStream('doors', '0123456789abcdef0123456789abcdef'),
        (e) => e instanceof ApiError && e.status === 404 && e.code === 'session_not_found');
});

test('transport errors are typed', async () => {
    const dead = new Client({ baseUrl: 'http://127.0.0.1:1', timeoutMs: 2000 });
    await assert.rejects(dead.getMap('room'), (e) => e instanceof TransportError && e.attempts === 1);
});

// The timeout only stops a hang (a server that never closes the stream): not a speed check.
test('503 with Retry-After: typed without retries, retried with them; timeouts; shutdown closes streams', { timeout: 120000 }, async () => {
    const s2 = await startServer(['--max-sessions', '1', '--retry-after', '1']);
    try {
        const none = new Client({ baseUrl: s2.url, maxRetries: 0 });
        await none.putMap('doors', DOORS);
        const a = await none.createSession('doors', { start: [0, 0], goal: [4, 0] });
        await assert.rejects(none.createSession('doors', { start: [0, 0], goal: [4, 0] }),
            (e) => e instanceof ApiError && e.status === 503 && e.code === 'overloaded' && e.retryAfterS === 1 && e.attempts === 1);

        const patient = new Client({ baseUrl: s2.url, maxRetries: 3 });
        // Freed once the server has refused the patient client too (its
        // second 503 in /metrics), not on a timer: a first attempt held back
        // by a loaded machine would find room at once and never retry.
        // The first refusal (none's) is counted before the patient starts,
        // so the next one is the patient's.
        const seen = [];
        const count = async () => {
            const c = await refused(none);
            seen.push(c.n);
            if (seen.length === 1 || c.n >= 2) seen.lines = c.lines;
            return c.n;
        };
        for (let i = 0; i < 12000 && (await count()) < 1; i++) await new Promise((r) => setTimeout(r, 10));
        const freed = (async () => {
            for (let i = 0; i < 12000 && (await count()) < 2; i++) await new Promise((r) => setTimeout(r, 10));
            await none.deleteSession('doors', a.session_id);
        })();
        const t0 = Date.now();
        const made = await patient.request('POST', '/v1/maps/doors/sessions', JSON.stringify({ start: [0, 0], goal: [4, 0] }), 'application/json');
        await freed;
        const why = `status ${made.status} after ${made.attempts} attempts in ${Date.now() - t0} ms; sessions_create 503s seen by the poll: ${seen.join(',')}; ${JSON.stringify(seen.lines)}`;
        assert.equal(made.status, 201, why);
        assert.ok(made.attempts >= 2 && Date.now() - t0 >= 900, `waited for Retry-After: ${why}`);
        const b = JSON.parse(made.text);
        assert.equal(b.found, true);

        await none.putMap('open', 'type octile\nheight 512\nwidth 512\nmap\n' + ('.'.repeat(512) + '\n').repeat(512));
        const hasty = new Client({ baseUrl: s2.url, timeoutMs: 300, maxRetries: 0 });
        const queries = Array.from({ length: 64 }, (_, i) => ({ start: [0, i], goal: [511, 511 - i], algorithm: 'dijkstra', cache: false }));
        // A TimeoutError, not the 200 or 504 the server answers later: the
        // client's own 300 ms ended the call.
        await assert.rejects(hasty.findPaths('open', queries, { deadline_ms: 3000 }), (e) => e instanceof TimeoutError);

        // The server takes the signal on its own thread: an update sent
        // before it has may still be answered, so send until the stream is
        // closed (the test's timeout ends a server that never closes it).
        const ws = await none.openStream('doors', b.session_id);
        s2.kill('SIGTERM');
        let closed;
        while (!closed) {
            try {
                await ws.send({ position: [1, 0] });
                await new Promise((r) => setImmediate(r));
            } catch (e) {
                closed = e;
            }
        }
        // 1001 when the server's close frame was read first; 1006 when the
        // send met the reset of the socket the server had closed.
        assert.ok(closed instanceof StreamClosedError && (closed.code === 1001 || closed.code === 1006), `closed with ${closed}`);
    } finally {
        assert.equal(await s2.stop(), 0);
    }
});

test('the example runs', async () => {
    await new Promise((resolve, reject) => {
        execFile(process.execPath, [path.resolve(__dirname, '../dist/example.js'), srv.url], (err, stdout) => {
            if (err) return reject(err);
            assert.match(stdout, /gate shut: found=false reason=unreachable/);
            assert.match(stdout, /graph path hall > door > 3 cost=35 \(start snapped to hall\)/);
            assert.match(stdout, /hall-door closed: hall > 3 cost=50/);
            resolve();
        });
    });
});
