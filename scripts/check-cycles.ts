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
 * Prints each cycle as a chain of files and exits 1 when there is one.
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

/** Edges from each scanned file to the scanned files it imports values from. */
function importGraph(): Map<string, string[]> {
  const options = compilerOptions();
  const files = scanned.flatMap((dir) =>
    ts.sys.readDirectory(resolve(root, dir), ['.ts'], undefined, ['**/*']).filter(isScanned),
  );
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = valueImports(file).flatMap((specifier) => {
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

const graph = importGraph();
const components = cyclicComponents(graph);
for (const component of components) {
  const members = new Set(component);
  const start = [...members].sort()[0]!;
  const chain = cycleThrough(start, members, graph).map((file) => relative(root, file));
  console.error(`import cycle (${members.size} files): ${chain.join(' -> ')}`);
}
if (components.length > 0) {
  console.error(
    `check-cycles: ${components.length} import cycle(s). Move what both sides need below both, or make the import type-only.`,
  );
  process.exit(1);
}
console.log(`check-cycles: no import cycle among ${graph.size} modules of ${scanned.join(', ')}`);
