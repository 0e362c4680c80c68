// Backup settings a server would act on wrongly: a schedule longer than a timer holds, and a blob
// mode the configured store cannot honour.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import t from 'tap';
import { MAX_TIMER_MS, scheduleBackups } from '../../core/backup/schedule.ts';
import { ConfigError, loadConfig } from '../../core/kernel/config.ts';

t.test('BACKUP_BLOBS=reference is refused with the disk store', async (t) => {
  t.throws(() => loadConfig({ env: { BACKUP_BLOBS: 'reference' } }), ConfigError);
  t.throws(() => loadConfig({ env: { BACKUP_BLOBS: 'reference' } }), { message: /BACKUP_BLOBS.*s3 blob store only/ });
  t.equal(loadConfig({ env: { BACKUP_BLOBS: 'include' } }).backup.blobs, 'include');
  const s3 = loadConfig({ env: { BACKUP_BLOBS: 'reference', BLOB_STORE: 's3', S3_BUCKET: 'bkt' } });
  t.equal(s3.backup.blobs, 'reference', 'accepted with the s3 store');
});

t.test('a schedule longer than a timer holds waits its full interval', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'folio-schedule-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  // The newest archive was just made; the next is due in 1000 hours (3.6e9 ms, over 2^31 - 1 ms).
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('.', '');
  await writeFile(path.join(dir, `folio-backup-${stamp}.zip`), 'x');
  const everyHours = 1000;
  t.ok(everyHours * 3_600_000 > MAX_TIMER_MS, 'the interval is over the limit');

  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  t.teardown(() => process.off('warning', onWarning));
  const logged: { msg: string; due?: string }[] = [];
  let armed!: () => void;
  const isArmed = new Promise<void>((r) => (armed = r));
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      const line = JSON.parse(chunk.toString()) as { msg: string; due?: string };
      logged.push(line);
      if (line.msg === 'next scheduled backup') armed();
      done();
    },
  });
  const config = loadConfig({ env: {}, overrides: { dataDir: dir, backup: { dir, everyHours, keep: 5, blobs: 'include' } } });
  const schedule = scheduleBackups(config, pino({ level: 'debug' }, sink))!;
  await isArmed;
  // Let a timer that overflowed (Node runs it after 1 ms) have its turn.
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 20));
  await schedule.close();

  const due = Date.parse(logged.find((l) => l.msg === 'next scheduled backup')!.due!);
  t.ok(due - Date.now() > MAX_TIMER_MS, 'the next backup is due after the full interval');
  t.notOk(
    logged.some((l) => /scheduled backup (written|failed)/.test(l.msg)),
    'no backup was started early',
  );
  t.notOk(warnings.includes('TimeoutOverflowWarning'), 'no timer overflowed');
  t.equal((await readdir(dir)).length, 1, 'no new archive');
});
