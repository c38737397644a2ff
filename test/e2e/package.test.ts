import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { childEnv, ROOT } from "./helpers.js";

/*
 * The package as an app gets it (issue 25 item 1): `npm pack`, installed offline into a fresh app, imported by its
 * name from compiled JavaScript with its types, running a plan with the app's own toolkit, and `npx candor` working,
 * with no tsx anywhere. The pack runs in a copy of the package's sources, so the clone gets no dist/ from a test.
 * Slow: the build is a full tsc, and installing compiles better-sqlite3.
 */

const execFileAsync = promisify(execFile);

/** Runs a command; a failure says what the command printed (tsc prints its errors on stdout). */
async function run(
  file: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; maxBuffer?: number } = {},
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execFileAsync(file, args, { maxBuffer: 64 * 1024 * 1024, ...options });
  } catch (e) {
    const out = e as { stdout?: string; stderr?: string };
    throw new Error(
      `${file} ${args.join(" ")} failed:\n${(out.stdout ?? "").slice(-4000)}\n${(out.stderr ?? "").slice(-4000)}`,
      { cause: e },
    );
  }
}
const SLOW = 20 * 60_000;

/** What `npm pack` needs: the package's files and the configuration its build reads. */
const PACKAGE_SOURCES = [
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "tsconfig.build.json",
  "README.md",
  "bin",
  "src",
  "graphs",
  "nodes",
  "prompts",
  "examples/travel",
];

const LockEntry = z.looseObject({ version: z.string().optional(), dev: z.boolean().optional() });
const Lockfile = z.object({ packages: z.record(z.string(), LockEntry) });
const Manifest = z.looseObject({
  version: z.string(),
  dependencies: z.record(z.string(), z.string()),
  bin: z.record(z.string(), z.string()),
});

/** An app of its own: its toolkit, the package's types, the testing entry, and a plan run offline with rules. */
const APP = `import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { compileAgent, defineTool, openPersistence, type Toolkit } from "candor";
import { ScriptedChatModel } from "candor/testing";

const tides: Toolkit = {
  name: "tides",
  tools: [
    defineTool({
      name: "get_tides",
      description: "Get the tide times for a harbour",
      category: "tides",
      keywords: ["tide", "tides", "harbour"],
      consumes: [],
      produces: ["tides"],
      sideEffect: "none",
      needsApproval: false,
      schema: z.object({ harbour: z.string().min(1) }),
      estimates: { durationMs: 10, cost: 0 },
      extractParams: (facts) => ({ harbour: /in ([A-Z][a-z]+)/.exec(facts.text)?.[1] ?? "Porto" }),
      describeStep: (p) => \`Tides in \${String(p.harbour)}\`,
      run: async ({ harbour }) => ({ summary: \`\${harbour}: high water 06:12 and 18:40\` }),
    }),
  ],
  workers: [{ name: "harbour_master", description: "Knows the tides", categories: ["tides"], keywords: ["tide"] }],
};

const persistence = openPersistence(path.join(mkdtempSync(path.join(tmpdir(), "candor-app-")), "app.db"));
try {
  const app = compileAgent({ toolkits: [tides] }, persistence);
  const out = await app.invoke(
    { request: { userIntent: "What are the tides in Porto?" } },
    { configurable: { thread_id: "t1" } },
  );
  const model = new ScriptedChatModel(["scripted answer"]);
  const said = await model.invoke("anything");
  model.assertConsumed();
  console.log(JSON.stringify({ status: out.status, answer: out.answer, scripted: said.content }));
} finally {
  persistence.close();
}
`;

/**
 * The app's lockfile: the package's production dependencies pinned as the clone's lockfile pins them, so an
 * offline install needs only the tarballs npm ci cached (the registry's metadata, which `npm install <tgz>`
 * would ask for, is not in a fresh cache).
 */
function appLockfile(tarball: string, manifest: z.infer<typeof Manifest>, zodVersion: string): unknown {
  const lock = Lockfile.parse(JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")));
  const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  const resolved = `file:${path.basename(tarball)}`;
  const production = Object.entries(lock.packages).filter(([where, entry]) => where !== "" && !entry.dev);
  return {
    name: "candor-app",
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { name: "candor-app", dependencies: { candor: resolved, zod: zodVersion } },
      "node_modules/candor": {
        version: manifest.version,
        resolved,
        integrity,
        dependencies: manifest.dependencies,
        bin: manifest.bin,
      },
      ...Object.fromEntries(production),
    },
  };
}

describe("the npm package", () => {
  it(
    "packs, installs offline into a fresh app that imports it by name and runs a plan, and npx candor works, without tsx",
    { timeout: SLOW },
    async () => {
      const work = mkdtempSync(path.join(tmpdir(), "candor-pack-"));
      try {
        const source = path.join(work, "source");
        for (const entry of PACKAGE_SOURCES)
          cpSync(path.join(ROOT, entry), path.join(source, entry), { recursive: true });
        symlinkSync(path.join(ROOT, "node_modules"), path.join(source, "node_modules"), "dir");
        const app = path.join(work, "app");
        mkdirSync(app);

        // prepack builds dist/ with tsc; --json names the tarball.
        const packed = await run("npm", ["pack", "--json", "--pack-destination", app], {
          cwd: source,
          env: childEnv(),
          maxBuffer: 64 * 1024 * 1024,
        });
        const [info] = z.array(z.object({ filename: z.string() })).parse(JSON.parse(packed.stdout));
        const tarball = path.join(app, info!.filename);
        const listing = (await run("tar", ["-tzf", tarball], { maxBuffer: 64 * 1024 * 1024 })).stdout.split("\n");
        expect(listing).toContain("package/dist/src/index.js");
        expect(listing).toContain("package/dist/src/index.d.ts");
        expect(listing).toContain("package/dist/src/testing.js");
        expect(listing).toContain("package/bin/candor.mjs");
        // An app gets compiled JavaScript and its types, never the TypeScript sources or the tests.
        expect(listing.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
        expect(listing.some((f) => f.startsWith("package/test/"))).toBe(false);

        const manifest = Manifest.parse(
          JSON.parse((await run("tar", ["-xOzf", tarball, "package/package.json"])).stdout),
        );
        expect(manifest).not.toHaveProperty("private");
        expect(Object.keys(manifest.dependencies)).not.toContain("tsx");
        const zodVersion = manifest.dependencies.zod!;
        writeFileSync(
          path.join(app, "package.json"),
          JSON.stringify({
            name: "candor-app",
            private: true,
            type: "module",
            dependencies: { candor: `file:${info!.filename}`, zod: zodVersion },
            allowScripts: { "better-sqlite3": true },
          }),
        );
        writeFileSync(
          path.join(app, "package-lock.json"),
          JSON.stringify(appLockfile(tarball, manifest, zodVersion), null, 2),
        );
        await run("npm", ["ci", "--offline", "--no-audit", "--no-fund"], {
          cwd: app,
          env: childEnv(),
          maxBuffer: 64 * 1024 * 1024,
        });
        expect(existsSync(path.join(app, "node_modules/candor/dist/src/index.js"))).toBe(true);
        // Nothing at run time can load tsx: it is not installed.
        expect(existsSync(path.join(app, "node_modules/tsx"))).toBe(false);

        // The app is TypeScript checked against the package's declarations, then run as JavaScript by node.
        writeFileSync(path.join(app, "app.ts"), APP);
        writeFileSync(
          path.join(app, "tsconfig.json"),
          JSON.stringify({
            compilerOptions: {
              target: "ES2022",
              module: "NodeNext",
              moduleResolution: "NodeNext",
              strict: true,
              skipLibCheck: true,
              typeRoots: [path.join(ROOT, "node_modules/@types")],
              types: ["node"],
            },
            files: ["app.ts"],
          }),
        );
        await run(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "."], { cwd: app });
        const ran = await run(process.execPath, ["app.js"], { cwd: app, env: childEnv() });
        expect(JSON.parse(ran.stdout.trim())).toEqual({
          status: "completed",
          answer: expect.stringContaining("Porto: high water 06:12 and 18:40"),
          scripted: "scripted answer",
        });

        const help = await run("npx", ["--offline", "candor", "--help"], { cwd: app, env: childEnv() });
        expect(help.stdout).toContain("Usage: candor");
        expect(help.stdout).toContain("threads");
        const version = await run("npx", ["--offline", "candor", "--version"], { cwd: app, env: childEnv() });
        expect(version.stdout.trim()).toBe(manifest.version);
        // The CLI's default toolkits (travel, with its gazetteer's data package) run from the installed package.
        const db = path.join(app, "candor.db");
        const demo = await run(
          "npx",
          ["--offline", "candor", "run", "Plan a 2-day trip from Paris to Rome for 1 person", "--db", db, "--json"],
          { cwd: app, env: childEnv(), maxBuffer: 64 * 1024 * 1024 },
        );
        expect(z.object({ status: z.string() }).parse(JSON.parse(demo.stdout)).status).toBe("completed");
        // `candor serve` needs the LangGraph API server, an optional peer the app did not install: it says how.
        const serve = await execFileAsync("npx", ["--offline", "candor", "serve", "--port", "0"], {
          cwd: app,
          env: childEnv(),
        }).then(
          () => ({ code: 0, stderr: "" }),
          (e: unknown) => {
            const failed = e as { code?: number; stderr?: string };
            return { code: failed.code, stderr: failed.stderr ?? "" };
          },
        );
        expect(serve.code).toBe(2);
        expect(serve.stderr).toContain("npm install @langchain/langgraph-api@1.5.1");
        expect(serve.stderr).not.toMatch(/Internal error|at .*\.js:\d+/);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    },
  );
});
