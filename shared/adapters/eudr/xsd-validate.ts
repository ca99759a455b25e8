/**
 * Validates `SubmitDdsRequest` XML against the EUDR Information System's V3 schema set kept in
 * `shared/adapters/eudr/xsd/` (see SOURCE.md), with libxml2 compiled to WebAssembly (xmllint-wasm;
 * each call runs in a short-lived worker thread). Offline: the schema imports resolve to the preloaded
 * local files. Tooling and tests only — it finds the schema files through `repoRoot()`.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateXML, type XMLFileInfo } from 'xmllint-wasm';
import { repoRoot } from '../../runtime/paths';

/** Entry schema (declares `SubmitDdsRequest`) and the files its imports need, by local file name. */
const ENTRY_SCHEMA = 'xsd4-due-diligence-statement-v3.xsd';
const IMPORTED_SCHEMAS = ['xsd2-eudr-common-v3.xsd', 'xsd5-error-v01.xsd', 'uncefact-unqualified-data-type-21.xsd'];
const XML_FILE_NAME = 'submit-dds-request.xml';

let schemaFiles: { schema: XMLFileInfo; preload: XMLFileInfo[] } | undefined;

function loadSchemas(): { schema: XMLFileInfo; preload: XMLFileInfo[] } {
  if (!schemaFiles) {
    const dir = join(repoRoot(), 'shared', 'adapters', 'eudr', 'xsd');
    const file = (fileName: string): XMLFileInfo => ({ fileName, contents: readFileSync(join(dir, fileName), 'utf8') });
    schemaFiles = { schema: file(ENTRY_SCHEMA), preload: IMPORTED_SCHEMAS.map(file) };
  }
  return schemaFiles;
}

/**
 * Validates one `dds:SubmitDdsRequest` document (the SOAP body content, UTF-8 text) against the V3 schema.
 * Resolves `{valid, errors}`; each error is `line N: <libxml2 message>` (the message names the element
 * and what was expected). A document that is not well-formed XML resolves invalid with the parser's
 * messages, as does a root element other than `SubmitDdsRequest` in the DDS namespace.
 * Rejects only when the validator itself fails (schema files missing or not compiling, worker error).
 */
export async function validateSubmitDdsRequest(xml: string): Promise<{ valid: boolean; errors: string[] }> {
  const { schema, preload } = loadSchemas();
  const rootProblem = rootElementProblem(xml);
  let result;
  try {
    result = await validateXML({ xml: { fileName: XML_FILE_NAME, contents: xml }, schema, preload });
  } catch (err) {
    // xmllint exit code 1: the input is not well-formed (the schema compiled, or it would be 5).
    const e = err as { code?: unknown; message?: string };
    if (e.code === 1) return { valid: false, errors: stderrLines(e.message ?? '') };
    throw err;
  }
  const errors = result.errors.map((e) => (e.loc ? `line ${e.loc.lineNumber}: ${e.message}` : e.message)).filter((m) => m.trim() !== '');
  if (rootProblem) return { valid: false, errors: [rootProblem, ...errors] };
  return { valid: result.valid, errors: result.valid ? [] : errors };
}

/**
 * Any root element declared by the schema would validate; only `SubmitDdsRequest` is accepted here.
 * A cheap textual check of the first element's local name (after the prolog and comments).
 */
function rootElementProblem(xml: string): string | null {
  const body = xml.replace(/<\?[\s\S]*?\?>/g, '').replace(/<!--[\s\S]*?-->/g, '');
  const m = /<([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)[\s>/]/.exec(body);
  if (m && m[2] !== 'SubmitDdsRequest') return `root element is '${m[2]}', expected 'SubmitDdsRequest'`;
  return null;
}

function stderrLines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.endsWith(' validates'))
    .map((l) => l.replace(new RegExp(`^${XML_FILE_NAME}:(\\d+):\\s*`), 'line $1: '));
}
