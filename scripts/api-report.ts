/**
 * CI check (`npm run api:check`): the public surface of each entry point in package.json
 * `exports` matches its committed API report in `api/`.
 *
 * API Extractor reads each entry point's declaration file in `dist/` (run `npm run build`
 * first) and writes a report of every exported name and signature. The report of `.` is
 * `api/durable-agent-sdk.api.md`; the report of `./testing` is
 * `api/durable-agent-sdk-testing.api.md`, and so on. One TypeScript program serves all the
 * entry points.
 *
 *   npx tsx scripts/api-report.ts            check: exits 1 when a report differs
 *   npx tsx scripts/api-report.ts --update   rewrite the reports in api/ (`npm run api:update`)
 *
 * Both modes exit 1 when an exported symbol or member has no doc comment (`ae-undocumented`)
 * and on any other API Extractor or compiler message, printed with its file and line in
 * `dist/` (the source is the same path under the repository, `.ts` for `.d.ts`). A type the
 * public API uses but no entry point exports is written into the report as a
 * `// Warning: (ae-forgotten-export)` line, so a new one changes the report and shows in review.
 * The TSDoc syntax is not checked: the comments follow JSDoc (`@throws {Type}`), as TypeDoc
 * reads them.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CompilerState,
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type ExtractorMessage,
  type IConfigFile,
} from '@microsoft/api-extractor';

const root = fileURLToPath(new URL('../', import.meta.url));
const reportFolder = join(root, 'api');
const update = process.argv.includes('--update');

interface EntryPoint {
  /** The subpath in package.json `exports`: `.`, `./testing`, ... */
  subpath: string;
  /** The declaration file it points to, absolute. */
  types: string;
  /** The report's file name without `.api.md`: `durable-agent-sdk-testing`. */
  report: string;
}

function entryPoints(): EntryPoint[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, { types: string }>;
  };
  return Object.entries(pkg.exports).map(([subpath, target]) => ({
    subpath,
    types: resolve(root, target.types),
    report: subpath === '.' ? pkg.name : `${pkg.name}-${subpath.replace(/^\.\//, '')}`,
  }));
}

function configObject(entry: EntryPoint, tempFolder: string): IConfigFile {
  return {
    projectFolder: root,
    mainEntryPointFilePath: entry.types,
    newlineKind: 'lf',
    compiler: {
      // The build's options, over the declaration files only.
      overrideTsconfig: {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022'],
          types: ['node'],
          strict: true,
          esModuleInterop: true,
          skipLibCheck: true,
        },
        files: [entry.types],
      },
    },
    apiReport: {
      enabled: true,
      reportFileName: entry.report,
      reportFolder,
      reportTempFolder: tempFolder,
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error } },
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.Error },
        // The package has one release level; it marks nothing @public, @beta or @internal.
        'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None },
        // Every exported symbol and member has a doc comment: one without fails the check.
        'ae-undocumented': { logLevel: ExtractorLogLevel.Error },
        // Written into the report at the use, so a new public use of an unexported type
        // changes the report and shows in review.
        'ae-forgotten-export': { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: true },
        // Links are checked by TypeDoc (`npm run docs:api`), which resolves them across the
        // entry points; API Extractor resolves them within one entry point only.
        'ae-unresolved-link': { logLevel: ExtractorLogLevel.None },
      },
      // The comments follow JSDoc (`@throws {Type}`, `@param options.name`, `@default` on
      // the same line), which TypeDoc reads; TSDoc's stricter syntax is not checked.
      tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
    },
  };
}

const entries = entryPoints();
const missing = entries.filter((entry) => !existsSync(entry.types));
if (missing.length > 0) {
  console.error(
    `api-report: no ${missing.map((entry) => relative(root, entry.types)).join(', ')}; run \`npm run build\` first`,
  );
  process.exit(1);
}

const tempFolder = mkdtempSync(join(tmpdir(), 'api-report-'));
mkdirSync(reportFolder, { recursive: true });
const configs = entries.map((entry) =>
  ExtractorConfig.prepare({
    configObject: configObject(entry, tempFolder),
    configObjectFullPath: undefined,
    packageJsonFullPath: join(root, 'package.json'),
  }),
);
const compilerState = CompilerState.create(configs[0]!, {
  additionalEntryPoints: entries.map((entry) => entry.types),
});

/**
 * The report as committed: API Extractor's text without the line and column of the
 * `// dist/….d.ts:12:5 - (ae-…)` notes at its end, which move with every edit above them.
 */
function normalized(report: string): string {
  return report.replace(/^(\/\/ \S+\.d\.ts):\d+:\d+ - /gm, '$1 - ');
}

/** Compare (or, with --update, write) one entry point's report; true when it changed. */
function compare(entry: EntryPoint): boolean {
  const committed = join(reportFolder, `${entry.report}.api.md`);
  const made = join(tempFolder, `${entry.report}.api.md`);
  const text = normalized(readFileSync(made, 'utf8'));
  if (existsSync(committed) && readFileSync(committed, 'utf8') === text) return false;
  writeFileSync(made, text);
  if (update) writeFileSync(committed, text);
  else if (existsSync(committed)) {
    const diff = spawnSync('diff', ['-u', committed, made], { encoding: 'utf8' });
    console.error(diff.stdout);
  }
  return true;
}

const changed: EntryPoint[] = [];
let problems = 0;
try {
  entries.forEach((entry, index) => {
    Extractor.invoke(configs[index]!, {
      // Not a local build: API Extractor writes the report to the temp folder only.
      localBuild: false,
      compilerState,
      messageCallback: (message: ExtractorMessage) => {
        message.handled = true;
        if (message.logLevel === ExtractorLogLevel.None) return;
        // API Extractor's own progress lines and its report-changed notice (compare() says it).
        if (message.messageId === 'console-api-report-changed') return;
        if (message.category === 'console' && message.logLevel !== ExtractorLogLevel.Error) return;
        problems += 1;
        console.error(`${entry.subpath}: ${message.formatMessageWithLocation(root)}`);
      },
    });
    if (compare(entry)) changed.push(entry);
  });
} finally {
  rmSync(tempFolder, { recursive: true, force: true });
}

for (const entry of changed) {
  const file = `api/${entry.report}.api.md`;
  console.error(
    update
      ? `${entry.subpath}: ${file} updated`
      : `${entry.subpath}: the public API differs from ${file}; if the change is meant, run \`npm run api:update\` and commit the report`,
  );
}
if (problems > 0 || (changed.length > 0 && !update)) process.exit(1);
console.log(
  `api-report: ${entries.length} entry points ${update ? 'written to' : 'match'} api/` +
    (update && changed.length === 0 ? ' (no change)' : ''),
);
