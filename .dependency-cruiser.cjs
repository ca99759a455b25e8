/**
 * The dependency rule of the service (docs/architecture.md#layers-and-the-dependency-rule), checked by `npm test`
 * (test/unit/architecture.test.ts) and by hand with
 * `npx depcruise --config .dependency-cruiser.cjs shared functions infra`.
 *
 *   functions/ → shared/composition → shared/use-cases → shared/domain
 *   shared/adapters implement the domain's ports; shared/http owns transport.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'shared/domain (entities, rules, ports, errors) imports nothing of ours outside itself; npm packages are allowed.',
      severity: 'error',
      from: { path: '^shared/domain/' },
      to: { path: '^(shared|functions|infra|test)/', pathNot: '^shared/domain/' },
    },
    {
      name: 'use-cases-use-ports',
      comment:
        'Use cases depend on the domain (and its ports), other use cases, the logger and the metrics recorder; never on adapters, transport, composition, auth or configuration.',
      severity: 'error',
      from: { path: '^shared/use-cases/' },
      to: { path: '^(shared|functions|infra|test)/', pathNot: '^shared/(domain|use-cases)/|^shared/runtime/(logger|metrics)\\.ts$' },
    },
    {
      name: 'handlers-not-adapters',
      comment: 'Handlers parse, call one use case through composition and shape the answer: no adapter, no infrastructure.',
      severity: 'error',
      from: { path: '^functions/' },
      to: { path: '^shared/adapters/|^infra/' },
    },
    {
      name: 'service-not-local-iam',
      comment: 'The local IAM enforcement is dev-only: functions and shared code never import it.',
      severity: 'error',
      from: { path: '^(functions|shared)/' },
      to: { path: '^infra/local/' },
    },
    {
      name: 'adapters-implement-ports',
      comment: 'Adapters implement domain ports; they never reach up into use cases, composition, transport or handlers.',
      severity: 'error',
      from: { path: '^shared/adapters/' },
      to: { path: '^shared/(use-cases|composition|http)/|^functions/|^infra/' },
    },
    {
      name: 'transport-not-adapters',
      comment: 'shared/http (parsing, validation, views, webhook signatures) gets its stores through ports, never adapters or composition.',
      severity: 'error',
      from: { path: '^shared/http/' },
      to: { path: '^shared/(adapters|composition)/|^functions/|^infra/' },
    },
    {
      name: 'only-functions-compose',
      comment: 'Composition is wired by handlers (and the local tools in infra), nothing in shared reaches it except itself.',
      severity: 'error',
      from: { path: '^shared/', pathNot: '^shared/composition/' },
      to: { path: '^shared/composition/' },
    },
    {
      name: 'no-circular',
      comment: 'No import cycle anywhere (type-only imports included).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|cdk\\.out|\\.local)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
  },
};
