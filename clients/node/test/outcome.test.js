// clients/node: changes whose outcome is unknown, against a real fleet: a
// redis-server primary whose one replica is stopped (SIGSTOP), and pathd
// --store on it with --store-wait-replicas 1, so every change is made on
// the primary and answered 503 store_outcome_unknown. The client retries
// only with If-Match of the version it last saw (412: made, never twice),
// a PUT of a new map with If-None-Match: *, a DELETE as done on 404, and
// not a PATCH it has no ETag for. Without redis-server: skipped (under CI a
// failure).
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { Client, ApiError } = require('../dist/index.js');

const { startServer } = require('../testlib/server.js');
const HAVE_REDIS = spawnSync('sh', ['-c', 'command -v redis-server'], { stdio: 'ignore' }).status === 0;
const ROOM = 'type octile\nheight 7\nwidth 10\nmap\n' + '....@.....\n'.repeat(5) + '..........\n'.repeat(2);

function freePort() {
    return new Promise((resolve, reject) => {
        const s = net.createServer();
        s.once('error', reject);
        s.listen(0, '127.0.0.1', () => {
            const { port } = s.address();
            s.close(() => resolve(port));
        });
    });
}

/** One inline command to the redis on port; resolves with its reply text. */
function redisAsk(port, cmd) {
    return new Promise((resolve) => {
        const sock = net.connect(port, '127.0.0.1');
        let out = '';
        sock.setTimeout(2000, () => sock.destroy());
        sock.on('connect', () => sock.write(cmd + '\r\n'));
        sock.on('data', (d) => {
            out += d;
            const m = /^\$(\d+)\r\n/.exec(out);
            if (!m || out.length >= m[0].length + Number(m[1])) sock.end();
        });
        sock.on('close', () => resolve(out));
        sock.on('error', () => resolve(''));
    });
}

async function until(what, fn, ms = 15000) {
    const deadline = Date.now() + ms;
    for (;;) {
        if (await fn()) return;
        if (Date.now() > deadline) throw new Error(`${what}: never`);
        await new Promise((r) => setTimeout(r, 50));
    }
}

async function startRedis(replicaOf) {
    const port = await freePort();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pathd-node-redis-'));
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no',
        '--repl-diskless-sync-delay', '0', '--logfile', path.join(dir, 'log')];
    if (replicaOf) args.push('--replicaof', '127.0.0.1', String(replicaOf));
    const proc = spawn('redis-server', args, { stdio: 'ignore' });
    proc.port = port;
    proc.dir = dir;
    await until('redis PING', async () => (await redisAsk(port, 'PING')).startsWith('+PONG'));
    return proc;
}

function stopRedis(proc) {
    if (!proc) return;
    try {
        proc.kill('SIGCONT');
        proc.kill('SIGKILL');
    } catch {
        /* gone */
    }
    fs.rmSync(proc.dir, { recursive: true, force: true });
}


let primary, replica, srv;

before(async () => {
    if (!HAVE_REDIS) return;
    primary = await startRedis();
    replica = await startRedis(primary.port);
    await until('replica online', async () => /state=online/.test(await redisAsk(primary.port, 'INFO replication')));
    srv = await startServer(['--store', `redis://127.0.0.1:${primary.port}`, '--store-wait-replicas', '1',
        '--store-wait-ms', '200', '--retry-after', '1']);
});

after(async () => {
    if (srv) {
        const code = await new Promise((res) => {
            srv.once('exit', (c) => res(c));
            srv.kill('SIGTERM');
        });
        assert.equal(code, 0, 'pathd exits 0 on SIGTERM');
    }
    stopRedis(replica);
    stopRedis(primary);
});

async function versionOf(id) {
    const a = await new Client({ baseUrl: srv.url, maxRetries: 0, timeoutMs: 30000 }).request('GET', `/v1/maps/${id}`);
    return a.status === 200 ? JSON.parse(a.text).version : 0;
}

function outcomeUnknown(status, attempts) {
    return (e) => e instanceof ApiError && e.code === 'store_outcome_unknown' && e.status === status && e.attempts === attempts;
}

test('a change whose outcome is unknown is made exactly once', { skip: !HAVE_REDIS && !process.env.CI && 'redis-server is not installed' }, async () => {
    assert.ok(HAVE_REDIS, 'redis-server is not installed (make fleet-deps)');
    // 30 s: a loaded machine must not turn the setup's answers into unknown outcomes.
    const c = new Client({ baseUrl: srv.url, maxRetries: 2, maxRetryWaitMs: 200, timeoutMs: 30000 });
    const stranger = new Client({ baseUrl: srv.url, maxRetries: 2, maxRetryWaitMs: 200, timeoutMs: 30000 });
    let m;
    try {
        m = await c.putMap('w', ROOM);
    } catch (e) {
        // The replica, running, did not confirm within --store-wait-ms on a
        // loaded machine: the map was made (the retry's 412 said so).
        if (!(e instanceof ApiError && e.code === 'store_outcome_unknown')) throw e;
        m = await c.getMap('w');
    }
    assert.equal(m.version, 1);
    assert.match(m.etag, /^"1-\d+"$/);

    replica.kill('SIGSTOP');
    try {
        // Made; the retry with If-Match of version 1 finds version 2.
        await assert.rejects(c.patchMap('w', { cells: [{ x: 1, y: 1, cost: 5 }] }), outcomeUnknown(412, 2));
        assert.equal(await versionOf('w'), 2, 'the PATCH was made once');
        // A client that never saw the map does not retry a PATCH.
        await assert.rejects(stranger.patchMap('w', { cells: [{ x: 2, y: 1, cost: 5 }] }), outcomeUnknown(503, 1));
        assert.equal(await versionOf('w'), 3);
        // The caller's If-Match is the retry's.
        const seen = await stranger.getMap('w');
        await assert.rejects(c.patchMap('w', { cells: [{ x: 3, y: 1, cost: 5 }] }, { ifMatch: seen.etag }), outcomeUnknown(412, 2));
        assert.equal(await versionOf('w'), 4);
        // A PUT of a new map: retried with If-None-Match: *.
        await assert.rejects(stranger.putMap('n', ROOM), outcomeUnknown(412, 2));
        assert.equal(await versionOf('n'), 1);
        // A DELETE: made; its retry finds the map gone, which is done.
        await c.deleteMap('n');
        assert.equal(await versionOf('n'), 0);
    } finally {
        replica.kill('SIGCONT');
    }
    // With the replica running, changes simply succeed.
    await until('a PATCH with the replica back', async () => {
        try {
            await c.patchMap('w', { cells: [{ x: 1, y: 1, cost: 3 }] });
            return true;
        } catch (e) {
            await c.getMap('w'); // the ETag the next try is based on
            return false;
        }
    });
});
