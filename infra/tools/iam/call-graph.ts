/**
 * Which Lambda functions can reach a piece of code: a static call graph over the TypeScript
 * sources (the language service's find-references), walked from a declaration up to the
 * `functions/<fn>/` entry points that (transitively) reference it.
 *
 * Used by the IAM template tests (test/infra/iam.test.ts) to derive, from the code itself, which
 * functions append audit entries or delete items, so the manifest's needs can be checked against
 * what the code really does. References through a domain port (`LoanStore.transition`) are found
 * because the repositories `implement` their ports; a callback stored in an object or passed as
 * an argument is followed to the named declaration that holds it. The graph over-approximates
 * (every reference counts, whatever branch it sits in), which is the safe side for "who may do X".
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** A declaration to start from: a top-level function, a class method (`Class.method`), or an exported const. */
export interface CodeTarget {
  /** Path from the repository root, e.g. `shared/adapters/dynamodb/loan-repo.ts`. */
  file: string;
  /** `name` or `ClassName.methodName`. */
  name: string;
}

/** Source folders whose code runs inside a function (tests and infra are not callers). */
const SOURCE_DIRS = ['functions', 'shared'];

function listTs(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) listTs(p, out);
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** A language service over `functions/` and `shared/` of `root`. */
export class CallGraph {
  private readonly service: ts.LanguageService;
  private readonly files: string[];
  private readonly cache = new Map<string, Set<string>>();

  constructor(private readonly root: string) {
    this.files = SOURCE_DIRS.flatMap((d) => (existsSync(join(root, d)) ? listTs(join(root, d)) : []));
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.Preserve,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      types: [],
    };
    const host: ts.LanguageServiceHost = {
      getScriptFileNames: () => this.files,
      getScriptVersion: () => '1',
      getScriptSnapshot: (f) => (existsSync(f) ? ts.ScriptSnapshot.fromString(readFileSync(f, 'utf8')) : undefined),
      getCurrentDirectory: () => root,
      getCompilationSettings: () => options,
      getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
      fileExists: ts.sys.fileExists,
      readFile: ts.sys.readFile,
      readDirectory: ts.sys.readDirectory,
      directoryExists: ts.sys.directoryExists,
      getDirectories: ts.sys.getDirectories,
    };
    this.service = ts.createLanguageService(host, ts.createDocumentRegistry());
  }

  /**
   * The function folders (`functions/<fn>/…`) whose code references `target`, directly or through
   * any chain of named declarations. @throws Error when the target is not declared in its file.
   */
  functionsReaching(target: CodeTarget): Set<string> {
    const file = resolve(this.root, target.file);
    const sf = this.service.getProgram()!.getSourceFile(file);
    if (!sf) throw new Error(`call-graph: ${target.file} is not a source file`);
    const nameNode = findDeclarationName(sf, target.name);
    if (!nameNode) throw new Error(`call-graph: no declaration ${target.name} in ${target.file}`);
    return this.reach(file, nameNode.getStart(sf), new Set());
  }

  private reach(file: string, pos: number, visiting: Set<string>): Set<string> {
    const key = `${file}:${pos}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    if (visiting.has(key)) return new Set();
    visiting.add(key);
    const out = new Set<string>();
    const program = this.service.getProgram()!;
    for (const group of this.service.findReferences(file, pos) ?? []) {
      for (const ref of group.references) {
        if (ref.isDefinition) continue;
        const fn = functionFolder(relative(this.root, ref.fileName));
        if (fn) {
          out.add(fn);
          continue;
        }
        const sf = program.getSourceFile(ref.fileName);
        if (!sf) continue;
        const holder = enclosingNamedDeclaration(sf, ref.textSpan.start);
        if (!holder) continue; // a type position or an import: not a call path
        for (const f of this.reach(ref.fileName, holder.getStart(sf), visiting)) out.add(f);
      }
    }
    visiting.delete(key);
    this.cache.set(key, out);
    return out;
  }
}

/** `functions/<fn>/…` → `<fn>`. */
function functionFolder(rel: string): string | undefined {
  const parts = rel.split(sep);
  return parts[0] === 'functions' && parts.length > 2 ? parts[1] : undefined;
}

/** The name identifier of `name` (`fn`, `Class.method`) declared in `sf`. */
function findDeclarationName(sf: ts.SourceFile, name: string): ts.Node | undefined {
  const [first, member] = name.split('.');
  let found: ts.Node | undefined;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if (
      (ts.isFunctionDeclaration(n) || ts.isClassDeclaration(n) || ts.isVariableDeclaration(n)) &&
      n.name &&
      ts.isIdentifier(n.name) &&
      n.name.text === first
    ) {
      if (!member) {
        found = n.name;
        return;
      }
      if (ts.isClassDeclaration(n)) {
        for (const m of n.members) if (m.name && ts.isIdentifier(m.name) && m.name.text === member) found = m.name;
        return;
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

/**
 * The name of the nearest named declaration around `pos` that holds runnable code: a function,
 * method, class member, variable or object property. Undefined when `pos` is in a type, an
 * import or an export clause (no call path).
 */
function enclosingNamedDeclaration(sf: ts.SourceFile, pos: number): ts.Node | undefined {
  let node: ts.Node | undefined = findToken(sf, pos);
  let from: ts.Node | undefined;
  while (node && node !== sf) {
    if (
      ts.isTypeNode(node) ||
      ts.isInterfaceDeclaration(node) ||
      ts.isTypeAliasDeclaration(node) ||
      ts.isImportDeclaration(node) ||
      ts.isExportDeclaration(node) ||
      ts.isImportEqualsDeclaration(node)
    )
      return undefined;
    if (
      (ts.isFunctionDeclaration(node) ||
        ts.isMethodDeclaration(node) ||
        ts.isPropertyDeclaration(node) ||
        ts.isGetAccessorDeclaration(node) ||
        ts.isClassDeclaration(node)) &&
      node.name
    )
      return node.name;
    if (ts.isConstructorDeclaration(node)) return node.parent.name;
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) return node.name;
    if (ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node)) {
      // A method of an object literal (`{ putCar: (…) => real().putCar(…) }`) is called through its
      // property (typed by a port, so its references are the port's); a value computed in a
      // property (`{ loans: loanRepo() }`) is computed by whatever builds the object.
      // A property's own name is where an object implements a member, not a call of it.
      if (ts.isPropertyAssignment(node) && from === node.name) return undefined;
      if (ts.isPropertyAssignment(node) && (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer)))
        return node.name;
      return enclosingNamedDeclaration(sf, node.parent.getStart(sf));
    }
    from = node;
    node = node.parent;
  }
  return undefined;
}

function findToken(sf: ts.SourceFile, pos: number): ts.Node | undefined {
  let result: ts.Node | undefined;
  const visit = (n: ts.Node): void => {
    if (pos >= n.getStart(sf) && pos < n.getEnd()) {
      result = n;
      ts.forEachChild(n, visit);
    }
  };
  visit(sf);
  return result;
}
