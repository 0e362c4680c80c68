// Builds the plugin SDK's declarations, `sdk/index.d.ts` (folio/sdk) and `sdk/testing.d.ts`
// (folio/sdk/testing), each one file rolled up by API Extractor from what tsc declares, and the
// API reports beside them (`*.api.md`): the public types as a reviewable text.
//
//   npm run sdk:build            writes them (commit them with the change that made them differ)
//   npm run sdk:build -- --check writes nothing; exits 1, naming the files, when they differ
//
// test/unit/sdk-api.test.ts runs the check, so a change to the SDK's public types fails the suite
// until its report is updated and reviewed.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Extractor, ExtractorConfig, ExtractorLogLevel } from '@microsoft/api-extractor';

const ROOT = path.resolve(import.meta.dirname, '..');
const SDK = path.join(ROOT, 'sdk');
const ENTRIES = [
  { name: 'index', source: 'core/sdk/index.d.ts' },
  { name: 'testing', source: 'core/plugin-testing.d.ts' },
];

/** Runs tsc (declarations only) into `outDir`; killed with this process's run when it is cut short. */
function declare(outDir: string, onChild: (kill: () => void) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(SDK, 'tsconfig.json'), '--outDir', outDir],
      { stdio: 'inherit' },
    );
    onChild(() => child.kill());
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tsc exited with ${code}`))));
  });
}

export async function buildSdkDeclarations(): Promise<Map<string, string>> {
  const tmp = mkdtempSync(path.join(tmpdir(), 'folio-sdk-'));
  let killTsc = () => {};
  const cleanup = () => rmSync(tmp, { recursive: true, force: true });
  // A run cut short (a test runner's timeout sends SIGTERM; Ctrl-C) still stops tsc and removes
  // its folder, then ends as the signal would have.
  const onSignal = (signal: NodeJS.Signals) => {
    killTsc();
    cleanup();
    process.kill(process.pid, signal);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  process.once('exit', cleanup);
  try {
    const dts = path.join(tmp, 'dts');
    await declare(dts, (kill) => (killTsc = kill));
    const out = new Map<string, string>();
    for (const entry of ENTRIES) {
      const rollup = path.join(tmp, `${entry.name}.d.ts`);
      const config = ExtractorConfig.prepare({
        configObjectFullPath: path.join(SDK, 'api-extractor.json'),
        packageJsonFullPath: path.join(ROOT, 'package.json'),
        configObject: {
          projectFolder: ROOT,
          mainEntryPointFilePath: path.join(dts, entry.source),
          compiler: {
            overrideTsconfig: {
              compilerOptions: {
                target: 'es2024',
                lib: ['es2024'],
                module: 'nodenext',
                moduleResolution: 'nodenext',
                strict: true,
                allowImportingTsExtensions: true,
                skipLibCheck: true,
                types: ['node'],
                noEmit: true,
              },
              files: [path.join(dts, entry.source)],
            },
          },
          apiReport: { enabled: true, reportFileName: `${entry.name}.api.md`, reportFolder: tmp, reportTempFolder: tmp },
          dtsRollup: { enabled: true, untrimmedFilePath: rollup },
          docModel: { enabled: false },
          tsdocMetadata: { enabled: false },
          messages: {
            extractorMessageReporting: {
              default: { logLevel: ExtractorLogLevel.None },
              'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None },
            },
            compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
            tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
          },
        },
      });
      const result = Extractor.invoke(config, { localBuild: true, showVerboseMessages: false });
      if (!result.succeeded) throw new Error(`API Extractor failed on ${entry.source}: ${result.errorCount} error(s)`);
      out.set(`${entry.name}.d.ts`, readFileSync(rollup, 'utf8'));
      out.set(`${entry.name}.api.md`, readFileSync(path.join(tmp, `${entry.name}.api.md`), 'utf8'));
    }
    return out;
  } finally {
    cleanup();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    process.off('exit', cleanup);
  }
}

/** The generated files that differ from the ones in sdk/. */
export function staleSdkFiles(built: Map<string, string>): string[] {
  return [...built]
    .filter(([file, text]) => {
      const at = path.join(SDK, file);
      return !existsSync(at) || readFileSync(at, 'utf8') !== text;
    })
    .map(([file]) => `sdk/${file}`);
}

if (import.meta.main) {
  const built = await buildSdkDeclarations();
  if (process.argv.includes('--check')) {
    const stale = staleSdkFiles(built);
    if (stale.length) {
      console.error(`The SDK's public types changed: ${stale.join(', ')} differ. Review them, then run npm run sdk:build and commit.`);
      process.exit(1);
    }
    console.log('sdk declarations and API reports are up to date');
  } else {
    for (const [file, text] of built) writeFileSync(path.join(SDK, file), text);
    console.log(`wrote ${[...built.keys()].map((f) => `sdk/${f}`).join(', ')}`);
  }
}
