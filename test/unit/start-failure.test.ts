// startFailureHint on errors of the shapes Node gives: listening on a port this user may not use
// (EACCES from listen, made here as Node makes it: running as root, a test cannot provoke it), and
// a real EADDRINUSE from a second listen on a taken port.
import t from 'tap';
import net from 'node:net';
import { startFailureHint } from '../../core/start-failure.ts';

const opts = { databaseUrl: null, port: 80, dataDir: '/var/lib/folio' };

t.test('a port this user may not listen on: which, why, and what to do', async (t) => {
  const err = Object.assign(new Error('listen EACCES: permission denied 0.0.0.0:80'), {
    code: 'EACCES',
    errno: -13,
    syscall: 'listen',
    address: '0.0.0.0',
    port: 80,
  });
  const hint = startFailureHint(err, opts);
  t.match(hint, /may not listen on port 80 \(EACCES; ports below 1024 need privileges\)/);
  t.match(hint, /PORT=3000 npm start/);
  t.notMatch(hint, /data directory/, 'not taken for a file that cannot be written');
});

t.test('a file that cannot be written is still about the data directory', async (t) => {
  const err = Object.assign(new Error("EACCES: permission denied, mkdir '/var/lib/folio/blobs'"), {
    code: 'EACCES',
    syscall: 'mkdir',
    path: '/var/lib/folio/blobs',
  });
  t.match(startFailureHint(err, opts), /cannot write \/var\/lib\/folio\/blobs \(EACCES\)/);
});

t.test('a port in use, as Node reports it', async (t) => {
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => taken.close());
  const port = (taken.address() as net.AddressInfo).port;
  const err = await new Promise<Error>((resolve) => net.createServer().once('error', resolve).listen(port, '127.0.0.1'));
  t.match(startFailureHint(err, { ...opts, port }), new RegExp(`^port ${port} is in use by another program`));
});
