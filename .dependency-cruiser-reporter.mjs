// @ts-check
// The report of `npm run depcheck:layers`: a dependency-cruiser reporter plugin, so one cruise checks both the
// module rules of .dependency-cruiser.mjs and the folder rule no module rule can say (no two src/ folders import
// each other, directly or round a longer loop). Each has a list of the violations that were there when it came in;
// CI fails on a violation not listed, and on a listed one that is gone (delete it, so the list only shrinks).
import { readFileSync } from "node:fs";
import path from "node:path";

const MODULE_BASELINE = ".dependency-cruiser-known-violations.json";
const FOLDER_BASELINE = ".dependency-cruiser-known-folder-cycles.json";
const FOLDER_RULE = "src-folders-acyclic";

/**
 * @typedef {{ name: string }} CycleStep
 * @typedef {{ from: string; to: string; rule: { name: string; severity: string }; cycle?: CycleStep[] }} Violation
 * @typedef {{ resolved: string; coreModule?: boolean; couldNotResolve?: boolean }} Dependency
 * @typedef {{ source: string; dependencies: Dependency[] }} Module
 */

/**
 * The node a module belongs to in the folder graph: its top folder under src/ (`src/tools` for
 * src/tools/builtin/docs.ts), or itself for a file directly in src/; null outside src/.
 * @param {string} source
 */
function folderOf(source) {
  const match = /^src\/([^/]+)(\/)?/.exec(source);
  if (!match) return null;
  return match[2] ? `src/${match[1]}` : source;
}

/**
 * Folder-level imports: "src/a -> src/b" to the module imports behind it.
 * @param {Module[]} modules
 */
function folderEdges(modules) {
  /** @type {Map<string, string[]>} */
  const edges = new Map();
  for (const m of modules) {
    const from = folderOf(m.source);
    if (!from) continue;
    for (const d of m.dependencies) {
      const to = d.coreModule || d.couldNotResolve ? null : folderOf(d.resolved);
      if (!to || to === from) continue;
      const key = `${from} -> ${to}`;
      edges.set(key, [...(edges.get(key) ?? []), `${m.source} -> ${d.resolved}`]);
    }
  }
  return edges;
}

/**
 * The strongly connected components of the folder graph (Tarjan): an edge lies on a cycle exactly when both of its
 * ends are in one component of more than one folder.
 * @param {Map<string, Set<string>>} next
 */
function components(next) {
  /** @type {Map<string, number>} */
  const index = new Map();
  /** @type {Map<string, number>} */
  const low = new Map();
  /** @type {Map<string, number>} */
  const component = new Map();
  /** @type {string[]} */
  const stack = [];
  let counter = 0;
  /** @param {string} v */
  const visit = (v) => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(Number(low.get(v)), Number(low.get(w))));
      } else if (!component.has(w)) {
        low.set(v, Math.min(Number(low.get(v)), Number(index.get(w))));
      }
    }
    if (low.get(v) === index.get(v)) {
      const id = Number(index.get(v));
      let w;
      do {
        w = String(stack.pop());
        component.set(w, id);
      } while (w !== v);
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return component;
}

/**
 * The shortest way back from `to` to `from`, which with the edge from → to is the loop that edge closes.
 * @param {Map<string, Set<string>>} next
 * @param {string} from
 * @param {string} to
 */
function loopThrough(next, from, to) {
  /** @type {Map<string, string>} */
  const cameFrom = new Map([[to, to]]);
  const queue = [to];
  while (queue.length > 0) {
    const v = String(queue.shift());
    if (v === from) break;
    for (const w of next.get(v) ?? []) {
      if (!cameFrom.has(w)) {
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
  }
  const back = [from];
  for (let v = from; v !== to && cameFrom.has(v);) {
    v = String(cameFrom.get(v));
    back.unshift(v);
  }
  return [from, ...back].join(" -> ");
}

/**
 * The folder rule: every folder edge on a cycle, and those of them that import each other directly.
 * @param {Module[]} modules
 */
function folderCycles(modules) {
  const edges = folderEdges(modules);
  /** @type {Map<string, Set<string>>} */
  const next = new Map();
  for (const key of edges.keys()) {
    const [from, to] = key.split(" -> ");
    next.set(from, (next.get(from) ?? new Set()).add(to));
    if (!next.has(to)) next.set(to, new Set());
  }
  const component = components(next);
  const onCycle = [...edges.keys()]
    .filter((key) => {
      const [from, to] = key.split(" -> ");
      return component.get(from) === component.get(to);
    })
    .sort();
  const pairs = onCycle.filter((key) => {
    const [from, to] = key.split(" -> ");
    return from < to && next.get(to)?.has(from);
  });
  return { onCycle, pairs, edges, next };
}

/**
 * Whether a listed violation is this one: dependency-cruiser's own matching (a cycle by its members, anything
 * else by rule, from and to).
 * @param {Violation} known
 * @param {Violation} found
 */
function sameViolation(known, found) {
  if (known.rule.name !== found.rule.name) return false;
  if (known.cycle && found.cycle) {
    const members = new Set(found.cycle.map((s) => s.name));
    return known.cycle.length === found.cycle.length && known.cycle.every((s) => members.has(s.name));
  }
  return known.from === found.from && known.to === found.to;
}

/** @param {Violation} v */
function describe(v) {
  const cycle = v.cycle ? ` (cycle: ${[v.from, ...v.cycle.map((s) => s.name)].join(" -> ")})` : "";
  return `${v.rule.name}: ${v.from} -> ${v.to}${cycle}`;
}

/** @returns {string[]} */
function listedFolderEdges() {
  try {
    return JSON.parse(readFileSync(path.join(import.meta.dirname, FOLDER_BASELINE), "utf8"));
  } catch (cause) {
    throw new Error(`${FOLDER_BASELINE} must be a JSON list of "src/a -> src/b" edges`, { cause });
  }
}

/**
 * @param {{ modules: Module[]; summary: { violations: Violation[]; optionsUsed: { knownViolations?: Violation[] };
 *   ruleSetUsed?: { forbidden?: { name: string }[] } } }} result
 * @returns {{ output: string; exitCode: number }}
 */
export default function layersReport(result) {
  const { violations, optionsUsed, ruleSetUsed } = result.summary;
  const fresh = violations.filter((v) => v.rule.severity !== "ignore");
  const known = violations.filter((v) => v.rule.severity === "ignore");
  const listed = optionsUsed.knownViolations ?? [];
  const fixed = listed.filter((k) => !known.some((v) => sameViolation(k, v)));

  const folders = folderCycles(result.modules);
  const listedEdges = listedFolderEdges();
  const freshEdges = folders.onCycle.filter((e) => !listedEdges.includes(e));
  const fixedEdges = listedEdges.filter((e) => !folders.onCycle.includes(e));

  const rules = (ruleSetUsed?.forbidden ?? []).map((r) => r.name);
  const count = (/** @type {Violation[]} */ list, /** @type {string} */ rule) =>
    list.filter((v) => v.rule.name === rule).length;
  const lines = [
    `Layer rules (.dependency-cruiser.mjs; listed in ${MODULE_BASELINE}): new / listed`,
    ...rules.map((r) => `  ${r.padEnd(32)} ${count(fresh, r)} / ${count(known, r)}`),
    `Folder rule (listed in ${FOLDER_BASELINE}): new / listed`,
    `  ${FOLDER_RULE.padEnd(32)} ${freshEdges.length} / ${folders.onCycle.length - freshEdges.length}` +
      ` folder imports on a cycle (${folders.pairs.length} pairs import each other: ` +
      `${folders.pairs.map((e) => e.replace(" -> ", " <-> ")).join(", ") || "none"})`,
  ];
  if (fresh.length > 0) {
    lines.push("", "New violations (fix them; the rule says why in .dependency-cruiser.mjs):");
    for (const v of fresh) lines.push(`  ${describe(v)}`);
  }
  if (freshEdges.length > 0) {
    lines.push("", "New folder imports on a cycle (no src/ folder may reach back to one that imports it):");
    for (const e of freshEdges) {
      const [from, to] = e.split(" -> ");
      const imports = folders.edges.get(e) ?? [];
      const more = imports.length > 3 ? ` and ${imports.length - 3} more` : "";
      lines.push(`  ${e}, closing ${loopThrough(folders.next, from, to)}; by ${imports.slice(0, 3).join(", ")}${more}`);
    }
  }
  if (fixed.length > 0) {
    lines.push("", `Fixed, so no longer allowed: \`npm run depcheck:baseline\` drops them from ${MODULE_BASELINE}:`);
    for (const v of fixed) lines.push(`  ${describe(v)}`);
  }
  if (fixedEdges.length > 0) {
    lines.push("", `Fixed, so no longer allowed: delete them from ${FOLDER_BASELINE}:`);
    for (const e of fixedEdges) lines.push(`  ${e}`);
  }
  const toActOn = fresh.length + freshEdges.length + fixed.length + fixedEdges.length;
  lines.push(
    "",
    toActOn === 0 ? "Layers: nothing new, nothing fixed and still listed." : `Layers: ${toActOn} to act on.`,
  );
  return { output: `${lines.join("\n")}\n`, exitCode: toActOn === 0 ? 0 : 1 };
}
