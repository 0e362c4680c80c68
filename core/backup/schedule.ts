// Scheduled backups, run by the server when `backup.dir` is set (off by default): an archive
// `folio-backup-<UTC time>.zip` every `backup.everyHours` (counted from the newest one there, so a
// restart neither skips nor repeats one), then all but the newest `backup.keep` removed. Set it on
// one node only when several share a database.
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../kernel/config.ts';

/** The longest delay setTimeout keeps (2^31 - 1 ms). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

const NAME = /^folio-backup-\d{8}T\d{6}(\d{3})?Z\.zip$/;

export interface ScheduledBackups {
  /** Stops the schedule and a backup in progress, and waits for it to end. */
  close(): Promise<void>;
}

export function scheduleBackups(
  config: Pick<Config, 'backup' | 'databaseUrl' | 'dataDir' | 'files'>,
  log: Logger,
): ScheduledBackups | null {
  const { dir, everyHours, keep, blobs } = config.backup;
  if (!dir) return null;
  const interval = everyHours * 3_600_000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;
  const stop = new AbortController();

  const next = (delay: number) => {
    if (closed) return;
    const due = Date.now() + Math.max(0, delay);
    log.debug({ due: new Date(due).toISOString() }, 'next scheduled backup');
    arm(due);
  };
  // A timer holds at most MAX_TIMER_MS (about 24.8 days; a longer one fires at once): a longer wait
  // is re-armed in pieces until it is due.
  const arm = (due: number) => {
    if (closed) return;
    const left = due - Date.now();
    timer = setTimeout(
      () => {
        if (due - Date.now() > 0) return arm(due);
        running = once().finally(() => {
          running = undefined;
          next(interval);
        });
      },
      Math.min(MAX_TIMER_MS, Math.max(0, left)),
    );
    timer.unref();
  };
  const once = async () => {
    const out = path.join(dir, `folio-backup-${new Date().toISOString().replace(/[-:]/g, '').replace('.', '')}.zip`);
    try {
      // Loaded on first use: a server without scheduled backups holds none of the archive code.
      const { createBackup } = await import('./dump.ts');
      const s = await createBackup(config, { out, blobs, log, signal: stop.signal });
      log.info({ ...s }, 'scheduled backup written');
      const removed = await prune(dir, keep);
      if (removed.length) log.info({ removed }, 'removed old scheduled backups');
    } catch (err) {
      if (stop.signal.aborted) log.info({ out }, 'scheduled backup stopped: the server is stopping');
      else log.error({ err, out }, 'scheduled backup failed');
    }
  };

  void newest(dir).then(
    (last) => next(last === null ? 0 : last + interval - Date.now()),
    () => next(0),
  );
  log.info({ dir, everyHours, keep }, 'scheduled backups on');
  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      // A backup in progress stops at its next write (its archive is not made), not after every file.
      stop.abort();
      await running;
    },
  };
}

/** The scheduled archives in `dir`, oldest first (their names sort by time). */
export async function scheduledArchives(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).filter((n) => NAME.test(n)).sort();
}

async function newest(dir: string): Promise<number | null> {
  const names = await scheduledArchives(dir);
  const last = names.at(-1);
  return last ? (await stat(path.join(dir, last))).mtimeMs : null;
}

async function prune(dir: string, keep: number): Promise<string[]> {
  const names = await scheduledArchives(dir);
  const old = names.slice(0, Math.max(0, names.length - keep));
  for (const n of old) await rm(path.join(dir, n), { force: true });
  return old;
}
