/** Loopback receiver for the outbox drain: drains the body and answers 200 "OK", nothing else. */
import { createServer } from 'node:http';

let count = 0;
const server = createServer((req, res) => {
  if (req.url === '/health') { res.end('ok'); return; }
  req.resume();
  req.on('end', () => { count += 1; res.writeHead(200, { 'content-type': 'text/plain' }); res.end('OK'); });
});
server.keepAliveTimeout = 30_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => { process.stderr.write(`received ${count}\n`); process.exit(0); });
