// The import rules of src/ (see the README's development section): no circle, and every
// arrow points down a floor. From the top:
//   index.ts, cli/            the package entry and the process entry
//   client/, testcontainers/, mcp/
//                             the typed client, the container module, the MCP server
//   app.ts                    the composition root
//   control/, ui/             the emulator's own HTTP faces
//   interfaces.ts, state.ts, state-schema.ts, state-worker.ts, fixture-schema.ts
//                             the one list of interfaces, and the state format made from it
//   world/                    the emulated world, no HTTP in it, and no interface named:
//                             it is handed the list
//   repository/ provisioning/ annotations/ alerts/   one folder per emulated interface
//   http/                     what every route shares
//   core/, config.ts          pure: no Fastify, nothing above them
const INTERFACES = '^src/(repository|provisioning|annotations|alerts|query)/';
const FASTIFY = '^(fastify|@fastify/|fastify-plugin)';
/** The list of interfaces and what is made from it. */
const LIST = '^src/(interfaces|state|state-schema|state-worker|fixture-schema)\\.ts$';

/** A rule that `from` may not import `to`. */
const forbid = (name, comment, from, to, extra = {}) => ({ name, comment, severity: 'error', from: { path: from, ...extra.from }, to: { path: to, ...extra.to } });

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'an import circle makes the floors meaningless', severity: 'error', from: {}, to: { circular: true } },
    forbid('core-is-pure', 'core/ and config.ts know nothing above them', '^src/(core/|config\\.ts)', '^src/', { to: { pathNot: '^src/(core/|config\\.ts)' } }),
    forbid('core-no-fastify', 'core/ is Fastify-free', '^src/(core/|config\\.ts)', FASTIFY, { to: { dependencyTypesNot: ['type-only'] } }),
    forbid('http-below-interfaces', 'http/ is shared by every route; it imports only core/ and config.ts', '^src/http/', '^src/', { to: { pathNot: '^src/(core/|config\\.ts|http/)' } }),
    forbid('interfaces-stay-apart', 'an interface imports core/, http/ and its own folder, never another interface or anything above', `${INTERFACES}`, '^src/', {
      to: { pathNot: ['^src/(core/|config\\.ts|http/)', '^src/$1/'] },
    }),
    forbid('world-has-no-http', 'world/ is the HTTP-free emulated world', '^src/world/', '^src/(http|control|ui|cli|mcp)/|^src/(app|index)\\.ts'),
    forbid('world-knows-no-interface', 'world/ is handed the list of interfaces (src/interfaces.ts); it never imports one', '^src/world/', `${INTERFACES}|${LIST}`),
    forbid('list-below-faces', 'the list of interfaces is read by control/, ui/ and app.ts, never the other way round', LIST, '^src/(control|ui|cli|client|testcontainers|mcp)/|^src/(app|index)\\.ts$'),
    forbid('world-no-fastify', 'world/ is the HTTP-free emulated world', '^src/world/', FASTIFY),
    forbid('domain-no-http', 'stores, the world and core/ throw DomainError (core/errors.ts) only; http/errors.ts alone maps it to a status', `^src/(core/|world/|config\\.ts)|${INTERFACES}(?!routes|guard|interface)[^/]+\\.ts$`, '^src/http/'),
    forbid('stores-no-fastify', 'stores and schemas know nothing of HTTP', `${INTERFACES}(?!routes|guard|interface)[^/]+\\.ts$`, FASTIFY),
    forbid('faces-below-app', 'control/ and ui/ are wired by app.ts, never the other way round', '^src/(control|ui)/', '^src/(cli|mcp)/|^src/(app|index)\\.ts'),
    forbid('app-below-entries', 'app.ts is below the package and process entries', '^src/app\\.ts', '^src/(cli|mcp)/|^src/index\\.ts'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    exclude: { path: '^src/ui/static/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
};
