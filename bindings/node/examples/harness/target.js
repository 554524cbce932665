// SPDX-License-Identifier: MIT
'use strict';
// The external system of the framework examples: an HTTP server on
// 127.0.0.1 that takes charges and honours Idempotency-Key, as a payment
// API does, and counts what arrives.
//
//   const target = await startTarget();   // target.url: POST a JSON { cents }
//   target.arrivals       requests that arrived (every one, repeats too)
//   target.byKey[key]     requests that arrived with that Idempotency-Key
//   target.effects        charges made: one per key, whatever arrives
//   target.delayMs        how long it waits before it answers
//   target.lose           answers still to lose: a request is acted on (a
//                         charge, or a replay) and its connection is then
//                         destroyed without an answer (target.lost counts)
//   target.onArrival      (key, body) => {}: called as a request arrives,
//                         before the answer (a test kills its sender there)
//   await target.close()
//
// A request without the header is refused (400); a repeat of a key gets the
// first answer again, with `Idempotent-Replayed: true`, and makes no charge;
// the same key with another body is refused (422), as the IETF draft says.
const http = require('node:http');

async function startTarget() {
  const first = new Map();                 // key -> { body, answer }
  const target = { arrivals: 0, byKey: {}, effects: 0, delayMs: 0, onArrival: null, lose: 0, lost: 0 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const key = req.headers['idempotency-key'];
      target.arrivals += 1;
      if (key !== undefined) target.byKey[key] = (target.byKey[key] || 0) + 1;
      if (target.onArrival) target.onArrival(key, body);
      // (unref: an answer still waiting keeps no test process alive)
      const lose = target.lose > 0;
      if (lose) { target.lose -= 1; target.lost += 1; }
      const answer = (status, json, headers = {}) => setTimeout(() => {
        if (lose) return req.socket.destroy();      // acted on; the answer is lost
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(json));
      }, target.delayMs).unref();
      if (key === undefined) return answer(400, { error: 'Idempotency-Key is required' });
      const seen = first.get(key);
      if (seen && seen.body !== body) return answer(422, { error: 'this key was used with another request' });
      if (seen) return answer(200, seen.answer, { 'idempotent-replayed': 'true' });
      target.effects += 1;
      const charge = { charge: `ch_${target.effects}`, cents: JSON.parse(body).cents };
      first.set(key, { body, answer: charge });
      return answer(201, charge);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  target.url = `http://127.0.0.1:${server.address().port}/charges`;
  target.close = () => new Promise((resolve) => {
    server.closeAllConnections();
    server.close(resolve);
  });
  return target;
}

module.exports = { startTarget };
