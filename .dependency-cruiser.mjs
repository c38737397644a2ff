// @ts-check
// The layer rules of DESIGN.md's "Target structure" that a tool can check: `npm run depcheck:layers` (in CI). The
// violations that were there when a rule came in are listed in .dependency-cruiser-known-violations.json and pass
// (--ignore-known); any other fails, and so does a listed one that is gone: `npm run depcheck:baseline` rewrites
// the list, which should only ever shrink. The folder rule (no two src/ folders import each other, directly or
// round a loop) is checked by the reporter, .dependency-cruiser-reporter.mjs, with its own list.

/** The app layer: the CLI, the public API and src/app/ (default toolkits, Studio's graph, the demo). */
const APP = "^src/(cli/|app/|index\\.ts$)";

/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment:
        "No import cycles anywhere, type-only imports included: modules in a cycle cannot be understood, tested " +
        "or moved one at a time.",
      from: {},
      to: { circular: true },
    },
    {
      name: "src-not-to-upper-layers",
      severity: "error",
      comment:
        "src/ lies below nodes/ and graphs/ and knows no example: only the app layer (src/cli/, src/index.ts, " +
        "src/app/) imports them.",
      from: { path: "^src/", pathNot: APP },
      to: { path: "^(nodes|graphs|examples)/" },
    },
    {
      name: "examples-only-from-app",
      severity: "error",
      comment:
        "src/app/ is the only place that names examples/ (the default toolkits, Studio's graph, the demo): " +
        "graphs/ assemble the toolkits they are given, and the CLI gets its toolkits and its demo from src/app/.",
      from: { path: "^(graphs|nodes|prompts)/|^src/(cli/|index\\.ts$)" },
      to: { path: "^examples/" },
    },
    {
      name: "graphs-name-no-toolkit",
      severity: "error",
      comment: "graphs/ are assembly only: the toolkits come from the caller (buildAgentGraph(deps)).",
      from: { path: "^graphs/" },
      to: { path: "^src/tools/(builtin|mcp)/" },
    },
    {
      name: "nodes-not-to-nodes",
      severity: "error",
      comment:
        "One thin adapter per node, and no node imports another. What they share: state.ts, names.ts, deps.ts " +
        "and ask.ts (askUntilAccepted, the loop that asks a person until the answer parses, and askToolApproval).",
      from: { path: "^nodes/" },
      to: { path: "^nodes/", pathNot: "^nodes/(state|names|deps|ask)\\.ts$" },
    },
    {
      name: "nodes-not-to-graphs",
      severity: "error",
      comment: "graphs/ assemble nodes; a node never reaches back up to the graph it is part of.",
      from: { path: "^nodes/" },
      to: { path: "^graphs/" },
    },
    {
      name: "prompts-only-from-reasoning-llm",
      severity: "error",
      comment: "prompts/ are the model reasoner's: one typed function per prompt, used only by src/reasoning/llm.ts.",
      from: { pathNot: "^(src/reasoning/llm\\.ts$|prompts/|test/|bench/)" },
      to: { path: "^prompts/" },
    },
    {
      name: "cli-commands-independent",
      severity: "error",
      comment:
        "src/cli/ has one file per command and no command imports another: what two commands share lives in a " +
        "module of src/cli/ beside them.",
      from: { path: "^src/cli/commands/" },
      to: { path: "^src/cli/commands/" },
    },
    {
      name: "domain-is-a-leaf",
      severity: "error",
      comment: "src/domain/ is zod schemas and types: of Candor it imports only src/errors.ts and src/result.ts.",
      from: { path: "^src/domain/" },
      to: {
        path: "^(src|nodes|graphs|prompts|examples|bench|test)/",
        pathNot: "^src/(domain/|errors\\.ts$|result\\.ts$)",
      },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|\\.candor|\\.langgraph_api|coverage)/" },
    // Type-only imports count: a layer that names another's types depends on it as much as on its values.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    // Package subpaths (`@langchain/langgraph/prebuilt`) resolve through their `exports`, as Node resolves them;
    // Candor's own name (examples/embed imports "candor") resolves to its source, as in tsconfig.json.
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["candor-source", "import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
    skipAnalysisNotInRules: true,
  },
};
