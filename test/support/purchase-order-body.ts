/**
 * A purchase order of `batchIds` to a Hamburg importer at 6.40 USD per kg, with the buyer's EU
 * operator details (name, EORI, address, e-mail, country) that a due diligence statement needs.
 */
export function purchaseOrderBody(batchIds: string[], overrides: Record<string, unknown> = {}) {
  return {
    batch_ids: batchIds,
    buyer: 'Hamburg Coffee Importers GmbH',
    price_usd_per_kg: 6.4,
    buyer_operator: {
      name: 'Hamburg Coffee Importers GmbH',
      eori: 'DE123456789012345',
      address: 'Am Sandtorkai 1, 20457 Hamburg',
      email: 'dds@hci.example',
      country: 'DE',
    },
    ...overrides,
  };
}
