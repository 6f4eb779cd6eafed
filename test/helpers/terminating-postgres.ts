import { createServer, type Server, type Socket } from 'node:net';

/**
 * Just enough of PostgreSQL's protocol to stand for a server whose backend ends the moment it
 * became ready, seen by a client too busy to read in between: its ReadyForQuery and a FATAL
 * 57P01 reach the client in one chunk. A failover does this: a killed node's backends that
 * outlive their postmaster send "terminating connection due to unexpected postmaster exit" to
 * their clients, a connection that had just been set up among them (so do pg_terminate_backend
 * and a shutdown). Every connection
 * is trusted (AuthenticationOk); one whose index `terminates` picks gets that chunk and is closed;
 * the others answer each simple query with one row `ro = false` (a server taking writes, for the
 * host probe of src/db/connect.ts).
 */
export async function terminatingPostgres(terminates: (index: number) => boolean): Promise<{ port: number; connections(): number; close(): Promise<void> }> {
  const msg = (type: string, body: Buffer) => {
    const b = Buffer.alloc(5 + body.length);
    b.write(type, 0);
    b.writeInt32BE(4 + body.length, 1);
    body.copy(b, 5);
    return b;
  };
  const fields = (o: Record<string, string>) => Buffer.concat([...Object.entries(o).map(([k, v]) => Buffer.from(`${k}${v}\0`)), Buffer.from([0])]);
  const authOk = msg('R', Buffer.from([0, 0, 0, 0]));
  const ready = msg('Z', Buffer.from('I'));
  const fatal = msg('E', fields({ S: 'FATAL', V: 'FATAL', C: '57P01', M: 'terminating connection due to unexpected postmaster exit' }));
  // RowDescription of one boolean column "ro", one DataRow "f", CommandComplete, ReadyForQuery.
  const column = Buffer.alloc(2 + 3 + 18);
  let o = column.writeInt16BE(1, 0);
  o += column.write('ro\0', o);
  o = column.writeInt32BE(0, o); o = column.writeInt16BE(0, o); o = column.writeInt32BE(16, o);
  o = column.writeInt16BE(-1, o); o = column.writeInt32BE(-1, o); column.writeInt16BE(0, o);
  const row = Buffer.alloc(7);
  row.writeInt16BE(1, 0); row.writeInt32BE(1, 2); row.write('f', 6);
  const answer = Buffer.concat([msg('T', column), msg('D', row), msg('C', Buffer.from('SELECT 1\0')), ready]);

  let n = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    const index = n++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    // The startup message (no SSLRequest: the client asks for no TLS), then queries.
    s.once('data', () => {
      if (terminates(index)) { s.end(Buffer.concat([authOk, ready, fatal])); return; }
      s.write(Buffer.concat([authOk, ready]));
      s.on('data', (d) => {
        if (d[0] === 0x51 /* Q */) s.write(answer);
        else if (d[0] === 0x58 /* X: Terminate */) s.end();
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as { port: number }).port,
    connections: () => n,
    close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  };
}
