import { compileContracts } from '../../infra/ledger/compile';
import { STAGE_CODES, auditAnchorAbi, batchTokenAbi, lendingVaultAbi, testUsdcAbi, traceLogAbi } from '../../shared/adapters/ledger/abi';

interface AbiParam { name: string; type: string; indexed?: boolean; components?: AbiParam[] }
interface AbiEntry { type: string; name?: string; inputs?: AbiParam[]; outputs?: AbiParam[]; stateMutability?: string; anonymous?: boolean }

/** One canonical line per ABI entry: kind, name, parameter names/types/indexing, mutability. */
function canonical(abi: readonly unknown[]): string[] {
  const params = (ps: AbiParam[] | undefined) =>
    (ps ?? []).map((p) => `${p.type}${p.indexed ? ' indexed' : ''} ${p.name}`).join(', ');
  return (abi as AbiEntry[])
    .map((e) => {
      const outputs = e.outputs ? ` returns (${params(e.outputs)})` : '';
      const mutability = e.stateMutability ? ` ${e.stateMutability}` : '';
      const anonymous = e.anonymous ? ' anonymous' : '';
      return `${e.type} ${e.name ?? ''}(${params(e.inputs)})${outputs}${mutability}${anonymous}`;
    })
    .sort();
}

describe('ledger ABIs in shared/adapters/ledger/abi.ts', () => {
  let compiled: Awaited<ReturnType<typeof compileContracts>>;
  beforeAll(async () => {
    compiled = await compileContracts();
  });

  it('BatchToken constant equals the compiled ABI (functions, events, errors)', () => {
    expect(canonical(batchTokenAbi)).toEqual(canonical(compiled.BatchToken.abi));
    expect(canonical(batchTokenAbi)).toContain(
      'function mint(address to, uint256 tokenId, string batchId, bytes32 auditHash) returns () nonpayable');
    expect(canonical(batchTokenAbi)).toContain(
      'event BatchMinted(uint256 indexed tokenId, string batchId, bytes32 auditHash)');
  });

  it('AuditAnchor constant equals the compiled ABI (functions, events, errors)', () => {
    expect(canonical(auditAnchorAbi)).toEqual(canonical(compiled.AuditAnchor.abi));
    expect(canonical(auditAnchorAbi)).toContain('function anchor(bytes32 root, uint32 headCount) returns () nonpayable');
  });

  it('TraceLog constant equals the compiled ABI (functions, events, errors)', () => {
    expect(canonical(traceLogAbi)).toEqual(canonical(compiled.TraceLog.abi));
    expect(canonical(traceLogAbi)).toContain(
      'event StageRecorded(uint256 indexed tokenId, uint8 indexed stage, string evidenceCid, bytes32 auditHash, address recorder)');
  });

  it('TestUSDC and LendingVault constants equal the compiled ABIs', () => {
    expect(canonical(testUsdcAbi)).toEqual(canonical(compiled.TestUSDC.abi));
    expect(canonical(lendingVaultAbi)).toEqual(canonical(compiled.LendingVault.abi));
    expect(canonical(lendingVaultAbi)).toContain('event PurchaseOrderPaid(bytes32 indexed poRef, address indexed payer, uint256 amount)');
    expect(canonical(lendingVaultAbi)).toContain('function openLoan(bytes32 loanRef, uint256 tokenId, uint256 principal) returns () nonpayable');
  });

  it('compiles to non-empty creation bytecode', () => {
    expect(compiled.BatchToken.bytecode).toMatch(/^0x[0-9a-f]{1000,}$/);
    expect(compiled.TraceLog.bytecode).toMatch(/^0x[0-9a-f]{100,}$/);
  });

  it('STAGE_CODES numbers the stages 0..6 in order', () => {
    expect(Object.entries(STAGE_CODES)).toEqual([
      ['DELIVERED', 0], ['GRADED', 1], ['MILLED', 2], ['WAREHOUSED', 3], ['COMMITTED', 4], ['EXPORTED', 5], ['SETTLED', 6],
    ]);
  });
});
