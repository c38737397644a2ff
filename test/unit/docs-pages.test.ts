import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/program.js";
import { readEnv } from "../../src/env.js";
import { buildReport, renderReport } from "../../src/transparency/report.js";
import { travelPlan } from "../fakes/toolkit-fixtures.js";

/**
 * The README and docs/ say what is true: every command they show names a script, a command and flags that exist,
 * every link and every repository path they name resolves. Read statically (the CLI's own definition, not its
 * --help output), so it costs no process; test/e2e/docs-commands.test.ts runs a few of the commands.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

const PAGES = [
  "README.md",
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const README = read("README.md");

/** Paths the docs name that are not in the repository on purpose, each with why. */
const NOT_IN_REPO = new Map([
  ["bench/PROMPT-QUALITY.md", "written by `npm run prompt-check`, which needs a paid model"],
  ["test/graph/my-replay.test.ts", "the name a reader gives their copy of the replay example"],
]);

const SCRIPTS = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;

const FENCE = /^```([^\n`]*)\n([\s\S]*?)^```$/gm;

/** A page's fenced blocks, with their language. */
function fences(text: string): { lang: string; body: string }[] {
  return [...text.matchAll(FENCE)].map((m) => ({ lang: (m[1] ?? "").trim(), body: m[2] ?? "" }));
}

/** A page's prose: the text outside fenced blocks. */
function prose(text: string): string {
  return text.replace(FENCE, "");
}

/** Inline code spans of a page's prose. */
function spans(text: string): string[] {
  return [...prose(text).matchAll(/`([^`\n]+)`/g)].map((m) => m[1] ?? "");
}

/**
 * Shell words, as a POSIX shell splits a simple command: quotes group, a backslash escapes, `#` after a space starts
 * a comment, `&&` and `;` end a command. An unterminated quote (an inline span cut for prose) runs to the end.
 */
function shellCommands(line: string): string[][] {
  const commands: string[][] = [[]];
  let word: string | null = null;
  const end = () => {
    if (word !== null) commands.at(-1)!.push(word);
    word = null;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'" || c === '"') {
      const close = line.indexOf(c, i + 1);
      const stop = close < 0 ? line.length : close;
      word = (word ?? "") + line.slice(i + 1, stop);
      i = stop;
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i];
    } else if (/\s/.test(c)) {
      end();
    } else if (c === "#" && word === null) {
      break;
    } else if (c === ";" || (c === "&" && line[i + 1] === "&")) {
      end();
      commands.push([]);
      if (c === "&") i++;
    } else {
      word = (word ?? "") + c;
    }
  }
  end();
  return commands.filter((c) => c.length > 0);
}

interface ShownCommand {
  page: string;
  text: string;
  words: string[];
}

const STARTS = /^(?:[A-Z_]+=\S*\s+)*(?:npm |npx |candor )/;

/**
 * The first-cell spans of a table whose first column is headed `command` (docs/cli.md's list of commands), each as
 * the `candor …` invocation it stands for; `\|` in a cell separates alternatives.
 */
function commandTableSpans(text: string): string[] {
  const out: string[] = [];
  let inTable = false;
  for (const line of prose(text).split("\n")) {
    if (!line.startsWith("|")) inTable = false;
    else if (/^\|\s*command\s*\|/.test(line)) inTable = true;
    else if (inTable) {
      const first = line.replace(/\\\|/g, " ").split("|")[1] ?? "";
      out.push(...[...first.matchAll(/`([^`]+)`/g)].map((m) => `candor ${m[1]}`));
    }
  }
  return out;
}

/** Every command a page shows: each line of a shell or text block, each inline span that is one, and each row of a
 * table of commands. */
function shownCommands(page: string): ShownCommand[] {
  const text = read(page);
  const lines = [
    ...fences(text)
      .filter((f) => !["ts", "js", "json"].includes(f.lang))
      .flatMap((f) => f.body.replace(/\\\n/g, " ").split("\n")),
    ...spans(text),
    ...commandTableSpans(text),
  ];
  return lines
    .map((l) => l.trim())
    .filter((l) => STARTS.test(l))
    .flatMap((l) => shellCommands(l).map((words) => ({ page, text: l, words: dropEnv(words) })));
}

/** The words of a command without the `NAME=value` assignments before it. */
function dropEnv(words: string[]): string[] {
  const first = words.findIndex((w) => !/^[A-Z_]+=/.test(w));
  return first < 0 ? [] : words.slice(first);
}

const program = buildProgram(
  { out: () => undefined, err: () => undefined, invokedAs: "candor", env: readEnv({}) },
  () => undefined,
);

const isPlaceholder = (w: string) => /[<…]|\.\.\./.test(w);

function flagsOf(c: Command): Set<string> {
  const flags = new Set(["--help", "-h"]);
  for (const o of c.options) {
    if (o.long) flags.add(o.long);
    if (o.short) flags.add(o.short);
  }
  return flags;
}

/**
 * What is wrong with a CLI invocation (the words after `candor`, `npx candor` or `npm start --`), or null: the
 * command path must exist and every flag must be one that command has.
 */
function cliProblem(args: string[]): string | null {
  const first = args[0];
  if (first !== undefined && isPlaceholder(first)) return null;
  let command: Command = program;
  let rest = args;
  if (first === undefined || first.startsWith("-")) {
    if (first === "--help" || first === "-h" || first === "--version" || first === "-V") return null;
    command = program.commands.find((c) => c.name() === "demo")!;
  } else if (first === "help") {
    return null;
  } else {
    while (rest[0] !== undefined && !rest[0].startsWith("-") && command.commands.length > 0) {
      const name = rest[0];
      const sub = command.commands.find((c) => c.name() === name);
      if (!sub) return `no command "${name}" (${command.commands.map((c) => c.name()).join(", ")})`;
      command = sub;
      rest = rest.slice(1);
    }
  }
  const flags = flagsOf(command);
  const end = rest.indexOf("--");
  for (const word of end < 0 ? rest : rest.slice(0, end)) {
    const flag = word.replace(/^\[|[\]|]+$/g, "").split("=")[0]!;
    if (!flag.startsWith("-") || isPlaceholder(flag) || /^-\d/.test(flag)) continue;
    if (!flags.has(flag)) return `"${command.name()}" has no flag ${flag}`;
  }
  return null;
}

/** What is wrong with a command a page shows, or null. */
function commandProblem(words: string[]): string | null {
  const [tool, verb, ...rest] = words;
  if (tool === "candor") return cliProblem(words.slice(1));
  if (tool === "npx" && verb === "candor") return cliProblem(rest);
  if (tool === "npx" && verb === "tsx")
    return rest[0] && !existsSync(path.join(ROOT, rest[0])) ? `no file ${rest[0]}` : null;
  if (tool !== "npm") return null;
  if (verb === "start") return rest[0] === "--" ? cliProblem(rest.slice(1)) : null;
  if (verb === "run") return rest[0] && !(rest[0] in SCRIPTS) ? `no npm script "${rest[0]}"` : null;
  return null;
}

describe("the commands the README and docs show exist as written", () => {
  const all = PAGES.flatMap(shownCommands);

  it("finds the commands (the extraction works)", () => {
    const readme = all.filter((c) => c.page === "README.md").map((c) => c.words.join(" "));
    expect(readme).toContain("npm ci");
    expect(readme).toContain("npm start");
    expect(readme).toContain("npm test");
    expect(all.length).toBeGreaterThan(60);
    const table = all.filter((c) => c.page === "docs/cli.md").map((c) => c.words.slice(0, 2).join(" "));
    expect(table).toEqual(expect.arrayContaining(["candor demo", "candor worker", "candor db"]));
  });

  it("the README keeps the two commands that start and test a clone", () => {
    expect(README).toContain("npm ci && npm start ");
    expect(README).toContain("npm ci && npm test ");
  });

  it("every npm script, candor command and flag named is real", () => {
    const problems = all.flatMap((c) => {
      const problem = commandProblem(c.words);
      return problem ? [`${c.page}: ${c.text}\n    ${problem}`] : [];
    });
    expect(problems).toEqual([]);
  });

  it("the checker itself refuses a command, a flag or a script that does not exist", () => {
    expect(commandProblem(["npm", "start", "--", "run", "x", "--no-such-flag"])).toMatch(/no flag --no-such-flag/);
    expect(commandProblem(["candor", "launch"])).toMatch(/no command "launch"/);
    expect(commandProblem(["candor", "db", "drop"])).toMatch(/no command "drop"/);
    expect(commandProblem(["npm", "run", "no-such-script"])).toMatch(/no npm script/);
    expect(commandProblem(["npx", "candor", "resume", "T", "--approve", "--db", "x.db"])).toBeNull();
    expect(commandProblem(["npm", "run", "chaos", "--", "--runs", "2"])).toBeNull();
  });
});

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = (m[1] ?? "")
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

describe("the README and docs link to what exists", () => {
  it("every relative link resolves to a file, and its #anchor to a heading there", () => {
    const problems: string[] = [];
    for (const page of PAGES) {
      for (const m of prose(read(page)).matchAll(/\]\(([^)\s]+)\)/g)) {
        const href = m[1]!;
        if (/^[a-z]+:/.test(href)) continue;
        const [file, anchor] = href.split("#") as [string, string | undefined];
        const target = file === "" ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
        if (!existsSync(path.join(ROOT, target))) {
          problems.push(`${page}: ${href} (no ${target})`);
          continue;
        }
        if (anchor !== undefined && target.endsWith(".md") && !anchors(read(target)).has(anchor))
          problems.push(`${page}: ${href} (no heading #${anchor} in ${target})`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("every docs page is reachable from the README's map", () => {
    const linked = [...README.matchAll(/\]\((docs\/[^)#\s]+)/g)].map((m) => m[1]);
    for (const page of PAGES.filter((p) => p !== "README.md")) expect(linked, page).toContain(page);
  });

  it("every repository path named in backticks exists", () => {
    const problems: string[] = [];
    for (const page of PAGES) {
      for (const span of spans(read(page))) {
        for (const m of span.matchAll(
          /(?:^|[\s(])((?:src|nodes|graphs|prompts|examples|test|bench|docs|bin|\.ci)\/[\w./-]*)/g,
        )) {
          const named = m[1]!.replace(/[.,]$/, "");
          if (/[*<]/.test(named) || NOT_IN_REPO.has(named)) continue;
          if (!existsSync(path.join(ROOT, named))) problems.push(`${page}: \`${span}\` (no ${named})`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("keeps the README within 250 lines: the door, with the rooms in docs/", () => {
    expect(README.split("\n").length).toBeLessThanOrEqual(250);
  });
});

/** The first ```ts block after `marker` in `text`. */
function blockAfter(text: string, marker: string): string {
  const at = text.indexOf(marker);
  expect(at, `the page has "${marker}"`).toBeGreaterThanOrEqual(0);
  const open = text.indexOf("```ts\n", at);
  const close = text.indexOf("\n```", open);
  return text.slice(open + "```ts\n".length, close + 1);
}

describe("the docs say what is true (issue 8 defect 11)", () => {
  const REPLAY = read("docs/replay.md");

  // Regression: the README's "test you can copy" failed where the README said to put it (vitest only runs test/**).
  it("the test you can copy is test/graph/readme-example.test.ts, word for word, and the page says to put it under test/", () => {
    const file = read("test/graph/readme-example.test.ts");
    expect(blockAfter(REPLAY, "A test you can copy")).toBe(file);
    expect(REPLAY).toMatch(/Put it under `test\/` \(vitest runs `test\/\*\*\/\*\.test\.ts` only\)/);
    expect(read("vitest.config.ts")).toContain('include: ["test/**/*.test.ts"]');
  });

  // Regression: how to run examples/embed was only in the file's header.
  it("says how to run examples/embed, with an npm script that runs it", () => {
    expect(SCRIPTS["example:embed"]).toBe("tsx --conditions=candor-source examples/embed/app.ts");
    expect(existsSync(path.join(ROOT, "examples/embed/app.ts"))).toBe(true);
    expect(README).toContain("`npm run example:embed`");
    expect(read("docs/embedding.md")).toContain("`npm run example:embed`");
  });

  // Regression: confidence reasons were said to be in `report --json` but were only in `run --json` and the logs.
  it("puts the plan's confidence reasons in the report (what report --json prints), and in its text", () => {
    const plan = {
      ...travelPlan("Plan a 10-day trip to Rome from Madrid"),
      confidenceReasons: ["matched by city names only", "a default origin was assumed"],
    };
    const report = buildReport({
      request: "r",
      plan,
      feedback: [],
      revisions: [],
      confidenceHistory: [],
      status: "completed",
      failureReason: null,
      lessons: [],
      startedAt: new Date().toISOString(),
    });
    expect(report.confidenceReasons).toEqual(["matched by city names only", "a default origin was assumed"]);
    expect(renderReport(report)).toContain("  Why: matched by city names only; a default origin was assumed");
    expect(read("docs/toolkits.md")).toMatch(/confidence reasons in `report --json`/);
  });
});
