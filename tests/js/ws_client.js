// ws_client.js -- an independent WebSocket client (npm `ws`) for
// tests/test_sessions.c: connects to the URL in argv[2], sends every further
// argument as one text message, waits for one answer each, prints each
// answer on its own line, then pings, closes and prints "closed <code>".
// Exit status 0 on a clean run, 1 on any error or a 10 s timeout.
// PATHD_TOKEN, when set, goes in an Authorization: Bearer header; for wss://
// URLs node trusts the extra CA file NODE_EXTRA_CA_CERTS names.
'use strict';
const WebSocket = require('ws');

const [url, ...messages] = process.argv.slice(2);
if (!url) {
  console.error('usage: node ws_client.js ws://host:port/path [message ...]');
  process.exit(2);
}
const timer = setTimeout(() => {
  console.error('timeout');
  process.exit(1);
}, 10000);
const opts = process.env.PATHD_TOKEN
  ? { headers: { Authorization: 'Bearer ' + process.env.PATHD_TOKEN } }
  : {};
const ws = new WebSocket(url, opts);
let next = 0;
ws.on('open', () => {
  if (messages.length === 0) ws.ping('hello');
  else ws.send(messages[next++]);
});
ws.on('message', (data, isBinary) => {
  if (isBinary) {
    console.error('unexpected binary message');
    process.exit(1);
  }
  console.log(data.toString());
  if (next < messages.length) ws.send(messages[next++]);
  else ws.ping('hello');
});
ws.on('pong', (data) => {
  console.log('pong ' + data.toString());
  ws.close(1000, 'done');
});
ws.on('close', (code) => {
  console.log('closed ' + code);
  clearTimeout(timer);
  process.exit(0);
});
ws.on('error', (err) => {
  console.error('error ' + err.message);
  process.exit(1);
});
