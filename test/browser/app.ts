import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import path from "node:path";
import { ROOT } from "../e2e/helpers.js";
import { freePort } from "../e2e/dev-server.js";

/*
 * The web app `create-agent-chat-app` makes, built as its users build it: its Vite template, from the npm package
 * pinned in devDependencies, with the dependencies locked in test/browser/app/ (the template itself locks none).
 * The lock leaves out three packages the page never loads: the template's own LangGraph server and CLI (Candor's
 * `langgraphjs dev` serves the page here) and turbo (the build is its `tsc -b && vite build` without tsc).
 */

const TEMPLATE = path.join(ROOT, "node_modules/create-agent-chat-app/templates/vite");
const LOCKED = path.join(ROOT, "test/browser/app");
/** Kept between runs, rebuilt when the template or the lock changes. */
const WORK = path.join(ROOT, "node_modules/.cache/candor-chat-app");

function log(line: string): void {
  process.stderr.write(`[chat-app] ${line}\n`);
}

/** The key of a build: the template's version and the locked dependencies. */
function buildKey(): string {
  const template = JSON.parse(
    readFileSync(path.join(ROOT, "node_modules/create-agent-chat-app/package.json"), "utf8"),
  ) as { version: string };
  return createHash("sha256")
    .update(template.version)
    .update(readFileSync(path.join(LOCKED, "package.json")))
    .update(readFileSync(path.join(LOCKED, "package-lock.json")))
    .digest("hex");
}

/** Installs and builds the app (once per template and lock); returns the directory of its static files. */
export function buildChatApp(): string {
  if (!existsSync(TEMPLATE))
    throw new Error(`${TEMPLATE} is missing: run \`npm ci\` (create-agent-chat-app is a devDependency).`);
  const key = buildKey();
  const dist = path.join(WORK, "dist");
  const keyFile = path.join(WORK, ".build-key");
  if (existsSync(dist) && existsSync(keyFile) && readFileSync(keyFile, "utf8") === key) {
    log(`reusing the build in ${dist}`);
    return dist;
  }
  rmSync(WORK, { recursive: true, force: true });
  cpSync(TEMPLATE, WORK, { recursive: true });
  cpSync(path.join(LOCKED, "package.json"), path.join(WORK, "package.json"));
  cpSync(path.join(LOCKED, "package-lock.json"), path.join(WORK, "package-lock.json"));
  log("installing the template's locked dependencies (a few minutes the first time)");
  execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: WORK, stdio: "inherit" });
  log("building it with vite");
  execFileSync(path.join(WORK, "node_modules/.bin/vite"), ["build", "--logLevel", "warn"], {
    cwd: WORK,
    stdio: "inherit",
  });
  writeFileSync(keyFile, key);
  return dist;
}

const TYPES: Record<string, string> = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".css": "text/css",
  ".svg": "image/svg+xml",
  ".woff2": "font/woff2",
  ".woff": "font/woff",
  ".ttf": "font/ttf",
  ".png": "image/png",
};

/** Serves the built app on a free local port; any path that is not a file gets index.html (a single-page app). */
export async function serveStatic(dir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const port = await freePort();
  const server: Server = createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url ?? "/", "http://localhost").pathname);
    const file = path.join(dir, path.normalize(pathname).replace(/^(\.\.[/\\])+/, ""));
    const target =
      file.startsWith(dir) && existsSync(file) && !file.endsWith(path.sep) && path.extname(file)
        ? file
        : path.join(dir, "index.html");
    res.writeHead(200, { "content-type": TYPES[path.extname(target)] ?? "application/octet-stream" });
    res.end(readFileSync(target));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
