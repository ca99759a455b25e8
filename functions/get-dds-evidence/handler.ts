import { evidencePackDeps } from '../../shared/composition/eudr';
import { EVIDENCE_PACK_CID_HEADER, evidencePackDocument } from '../../shared/http/evidence-pack';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getDdsEvidenceRoute } from '../../shared/http/routes/eudr';
import { readEvidencePack } from '../../shared/use-cases/evidence-pack';

/**
 * GET /eudr/dds/{id}/evidence (docs/api/eudr.md#due-diligence-statements, docs/api/anchoring.md#anchoring-of-the-audit-log): the evidence pack an EU importer hands an
 * authority — the RFC 8785 canonical JSON of the DDS, its forest checks, the batch's trail and
 * audit anchors; its CIDv1 (raw, sha2-256 of exactly the body bytes) in `X-Evidence-Pack-CID` and
 * as a strong ETag. Roles as GET /eudr/dds/{id}: ADMIN; COOPERATIVE of the statement.
 */
export const handler = httpHandler(routeOptions(getDdsEvidenceRoute), async ({ caller, params, requestId }) => {
  const pack = await evidencePackDocument(await readEvidencePack(evidencePackDeps(), caller, params.id ?? ''));
  return {
    statusCode: 200,
    headers: {
      'content-type': 'application/json',
      'x-request-id': requestId,
      [EVIDENCE_PACK_CID_HEADER]: pack.cid,
      etag: `"${pack.cid}"`,
      'cache-control': 'private, no-cache',
      'content-disposition': `inline; filename="${params.id}-evidence.json"`,
    },
    body: pack.text,
  };
});
