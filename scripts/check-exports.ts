/**
 * CI check (part of `npm run lint`): every export of `src/`, `workflows/` and `activities/`
 * is imported somewhere, or is public.
 *
 * Public: what the package's entry points export (the `exports` and `bin` of package.json,
 * mapped from `dist/` back to the sources, and the workflow bundle's entry
 * `workflows/index.ts`), followed through re-exports to the declaration. Imported: named
 * by an import or an `import('…')` type in any file tsconfig.json compiles (tests, benches,
 * scripts and examples included), resolved through re-exports to the declaration; a
 * namespace import (`import * as m`) or a dynamic `import()` counts as using all of the
 * module's exports. A re-export (`export { x } from`) is not a use by itself.
 *
 * An export nobody imports is dead code or a file-local helper: delete it, or drop the
 * `export`. If it is meant for users, export it from an entry point.
 *
 *   npx tsx scripts/check-exports.ts
 *
 * Prints `file:line name` for each unused export and exits 1 when there is one.
 */
import { readFileSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { parsedTsConfig, root, scanned } from './ts-project.js';

function program(): ts.Program {
  const parsed = parsedTsConfig();
  return ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
}

function isScanned(file: ts.SourceFile): boolean {
  const path = relative(root, file.fileName);
  return !file.isDeclarationFile && scanned.some((dir) => path.startsWith(dir + sep));
}

/** Source files of the package's entry points: `dist/src/x.js` in package.json is `src/x.ts`. */
function entryFiles(): string[] {
  const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as {
    exports?: Record<string, string | Record<string, string>>;
    bin?: string | Record<string, string>;
  };
  const targets: string[] = [];
  for (const target of Object.values(pkg.exports ?? {})) {
    if (typeof target === 'string') targets.push(target);
    else targets.push(...Object.values(target).filter((path) => path.endsWith('.js')));
  }
  targets.push(...(typeof pkg.bin === 'string' ? [pkg.bin] : Object.values(pkg.bin ?? {})));
  const sources = targets.map((target) =>
    resolve(root, target.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts')),
  );
  return [...sources, resolve(root, 'workflows/index.ts')];
}

const prog = program();
const checker = prog.getTypeChecker();

/** The declaration an alias (import, re-export) stands for. */
function original(symbol: ts.Symbol): ts.Symbol {
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

function moduleExports(moduleSymbol: ts.Symbol | undefined): ts.Symbol[] {
  return moduleSymbol ? checker.getExportsOfModule(moduleSymbol).map(original) : [];
}

const used = new Set<ts.Symbol>();
const useAll = (specifier: ts.Node): void => {
  for (const symbol of moduleExports(checker.getSymbolAtLocation(specifier))) used.add(symbol);
};
const useName = (name: ts.Node): void => {
  const symbol = checker.getSymbolAtLocation(name);
  if (symbol) used.add(original(symbol));
};

for (const file of prog.getSourceFiles()) {
  if (file.isDeclarationFile) continue;
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      if (clause?.name) useName(clause.name);
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) useAll(node.moduleSpecifier);
      if (bindings && ts.isNamedImports(bindings))
        for (const spec of bindings.elements) useName(spec.name);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      // `export * as m from` hands the whole module on under one name.
      if (node.exportClause && ts.isNamespaceExport(node.exportClause))
        useAll(node.moduleSpecifier);
    } else if (ts.isImportTypeNode(node)) {
      // `import('./x.js').Name`: the qualifier's last name is the use.
      if (node.qualifier) {
        const last = ts.isIdentifier(node.qualifier) ? node.qualifier : node.qualifier.right;
        useName(last);
      } else if (ts.isLiteralTypeNode(node.argument)) {
        useAll(node.argument.literal);
      }
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      useAll(node.arguments[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
}

const entries = new Set(entryFiles());
const publicSymbols = new Set<ts.Symbol>();
for (const entry of entries) {
  const file = prog.getSourceFile(entry);
  if (!file)
    throw new Error(
      `check-exports: entry point ${relative(root, entry)} is not compiled by tsconfig.json`,
    );
  for (const symbol of moduleExports(checker.getSymbolAtLocation(file))) publicSymbols.add(symbol);
}

const unused: string[] = [];
for (const file of prog.getSourceFiles()) {
  if (!isScanned(file) || entries.has(resolve(file.fileName))) continue;
  const moduleSymbol = checker.getSymbolAtLocation(file);
  if (!moduleSymbol) continue;
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    const target = original(symbol);
    if (used.has(target) || publicSymbols.has(target)) continue;
    // Where this file exports it: its declaration, or the re-export naming it.
    const declaration =
      symbol.declarations?.find((d) => d.getSourceFile() === file) ?? symbol.declarations?.[0];
    const line = declaration
      ? declaration.getSourceFile().getLineAndCharacterOfPosition(declaration.getStart()).line + 1
      : 0;
    unused.push(`${relative(root, file.fileName)}:${line} ${symbol.name}`);
  }
}

if (unused.length > 0) {
  for (const entry of unused.sort()) console.error(`unused export: ${entry}`);
  console.error(
    `check-exports: ${unused.length} export(s) nobody imports. Delete them, drop the \`export\`, or export them from an entry point.`,
  );
  process.exit(1);
}
console.log(`check-exports: every export of ${scanned.join(', ')} is imported or public`);
