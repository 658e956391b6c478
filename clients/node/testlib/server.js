// A pathd for the client tests: startServer(args) spawns PATHD_BIN (else
// build/pathd) on --port 0, reads the port from its "listening on" line,
// waits for /readyz and resolves with the process, its url and stop().
// Kept outside test/, which `node --test test/` runs file by file.
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');
const { Client } = require('../dist/index.js');

const BIN = process.env.PATHD_BIN || path.resolve(__dirname, '../../../build/pathd');

function startServer(args = []) {
    return new Promise((resolve, reject) => {
        const proc = spawn(BIN, ['--port', '0', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        const timer = setTimeout(() => reject(new Error(`pathd did not start: ${out}`)), 20000);
        proc.on('error', reject);
        proc.stdout.on('data', async (d) => {
            out += d;
            const m = /listening on [^:]+:(\d+)/.exec(out);
            if (!m || proc.url) return;
            proc.url = `http://127.0.0.1:${m[1]}`;
            const probe = new Client({ baseUrl: proc.url, maxRetries: 0, timeoutMs: 2000 });
            for (;;) {
                try {
                    if ((await probe.request('GET', '/readyz')).status === 200) break;
                } catch {
                    /* not yet */
                }
                await new Promise((r) => setTimeout(r, 20));
            }
            clearTimeout(timer);
            proc.stop = () => new Promise((res) => {
                if (proc.exitCode !== null) return res(proc.exitCode);
                proc.once('exit', (code) => res(code));
                proc.kill('SIGTERM');
            });
            resolve(proc);
        });
    });
}

module.exports = { BIN, startServer };
