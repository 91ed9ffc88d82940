/**
 * CI check (part of `npm run lint`): no import cycle among the modules of `src/`,
 * `workflows/` and `activities/`.
 *
 * A cycle of value imports makes module evaluation order depend on which module is
 * imported first: one side then reads the other's bindings before they are initialized (a
 * `ReferenceError` at load time in one entry point and not in another). Type-only imports
 * (`import type`, `export type`) are erased from the output, so they form no edge; an
 * `import { type A }` stays as `import {}` under `verbatimModuleSyntax`, so it does. Dynamic
 * `import()` is evaluated late and forms no edge either.
 *
 *   npx tsx scripts/check-cycles.ts
 *
 * Then the same one level up, between folders (`src/<part>/`, `activities/`, `workflows/`,
 * and `src/index.ts` as `src`): any import counts there, type-only and dynamic ones too,
 * since a folder that names another's types depends on it as much. The folders are the
 * architecture (STYLE.md): a folder cycle means two parts that cannot be read, tested or
 * moved apart.
 *
 * Prints each cycle as a chain of files (or folders, with one import of each step) and exits
 * 1 when there is one.
 */
import { readFileSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { parsedTsConfig, root, scanned } from './ts-project.js';

/** The compiler options of tsconfig.json, so `./x.js` specifiers resolve as tsc resolves them. */
function compilerOptions(): ts.CompilerOptions {
  return parsedTsConfig().options;
}

function isScanned(file: string): boolean {
  const path = relative(root, file);
  return (
    !path.endsWith('.d.ts') &&
    scanned.some((dir) => path.startsWith(dir + sep)) &&
    !path.includes(`node_modules${sep}`)
  );
}

/** The module specifiers of `file`'s value imports and re-exports. */
function valueImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      if (statement.importClause?.phaseModifier === ts.SyntaxKind.TypeKeyword) continue;
    } else if (ts.isExportDeclaration(statement)) {
      if (statement.isTypeOnly || !statement.moduleSpecifier) continue;
    } else {
      continue;
    }
    const specifier = statement.moduleSpecifier;
    if (specifier && ts.isStringLiteral(specifier)) specifiers.push(specifier.text);
  }
  return specifiers;
}

/** The module specifiers of every import of `file`: type-only, re-exports and `import()` too. */
function allImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      specifiers.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers;
}

/** Edges from each scanned file to the scanned files it imports values from. */
function importGraph(imports: (file: string) => string[] = valueImports): Map<string, string[]> {
  const options = compilerOptions();
  const files = scanned.flatMap((dir) =>
    ts.sys.readDirectory(resolve(root, dir), ['.ts'], undefined, ['**/*']).filter(isScanned),
  );
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = imports(file).flatMap((specifier) => {
      const resolved = ts.resolveModuleName(
        specifier,
        file,
        options,
        ts.sys,
        undefined,
        undefined,
        ts.ModuleKind.ESNext,
      ).resolvedModule?.resolvedFileName;
      return resolved && isScanned(resolved) ? [resolve(resolved)] : [];
    });
    graph.set(resolve(file), [...new Set(targets)]);
  }
  return graph;
}

/** Tarjan's strongly connected components: the ones with more than one file, or a self-import. */
function cyclicComponents(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.includes(node)) components.push(component);
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components;
}

/** One cycle through `start` inside its component (breadth-first, so a shortest one). */
function cycleThrough(
  start: string,
  component: Set<string>,
  graph: Map<string, string[]>,
): string[] {
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const target of graph.get(node) ?? []) {
      if (!component.has(target)) continue;
      if (target === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(from.get(path[0]!)!);
        return [...path, start];
      }
      if (!from.has(target)) {
        from.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start];
}

/** The folder a scanned file belongs to: `src/<part>`, `src` (its entry), or its top folder. */
function folderOf(file: string): string {
  const parts = relative(root, file).split(sep);
  if (parts[0] === 'src') return parts.length > 2 ? `src/${parts[1]}` : 'src';
  return parts[0]!;
}

/** Folder edges of `files`, each with one file import that makes it (for the message). */
function folderGraph(files: Map<string, string[]>): {
  graph: Map<string, string[]>;
  example: Map<string, string>;
} {
  const edges = new Map<string, Set<string>>();
  const example = new Map<string, string>();
  for (const [file, targets] of files) {
    const from = folderOf(file);
    if (!edges.has(from)) edges.set(from, new Set());
    for (const target of targets) {
      const to = folderOf(target);
      if (to === from) continue;
      edges.get(from)!.add(to);
      const key = `${from} -> ${to}`;
      if (!example.has(key))
        example.set(key, `${relative(root, file)} imports ${relative(root, target)}`);
    }
  }
  const graph = new Map([...edges].map(([from, to]) => [from, [...to].sort()]));
  return { graph, example };
}

const graph = importGraph();
const components = cyclicComponents(graph);
for (const component of components) {
  const members = new Set(component);
  const start = [...members].sort()[0]!;
  const chain = cycleThrough(start, members, graph).map((file) => relative(root, file));
  console.error(`import cycle (${members.size} files): ${chain.join(' -> ')}`);
}
const folders = folderGraph(importGraph(allImports));
const folderComponents = cyclicComponents(folders.graph);
for (const component of folderComponents) {
  const members = new Set(component);
  const chain = cycleThrough([...members].sort()[0]!, members, folders.graph);
  console.error(`folder cycle: ${chain.join(' -> ')}`);
  for (let i = 0; i + 1 < chain.length; i++) {
    console.error(`  ${folders.example.get(`${chain[i]} -> ${chain[i + 1]}`)}`);
  }
}
if (components.length > 0) {
  console.error(
    `check-cycles: ${components.length} import cycle(s). Move what both sides need below both, or make the import type-only.`,
  );
}
if (folderComponents.length > 0) {
  console.error(
    `check-cycles: ${folderComponents.length} folder cycle(s). Move what both folders need into the lower one (or below both): ` +
      'see the layout in STYLE.md.',
  );
}
if (components.length > 0 || folderComponents.length > 0) process.exit(1);
console.log(
  `check-cycles: no import cycle among ${graph.size} modules of ${scanned.join(', ')}, ` +
    `and no cycle among their ${folders.graph.size} folders`,
);
