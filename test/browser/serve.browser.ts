import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import pg from "pg";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, spawnCli } from "../e2e/helpers.js";
import { startThrowawayPostgres, type ThrowawayPostgres } from "../fakes/postgres.js";
import { startServe, type ServeProcess } from "../serve/serve-process.js";
import { buildChatApp, serveStatic } from "./app.js";

/*
 * Issue 25 item 3 in a real browser: the chat app create-agent-chat-app makes (as chat.browser.ts builds it),
 * against `candor serve` on a throwaway PostgreSQL with two `candor worker`s. What the person types goes through the
 * API to the run queue, a worker runs it, the page shows the plan and the answer; an approval is accepted in the
 * page and a worker finishes the run.
 */

const CHROMIUM = process.env.CANDOR_CHROMIUM ?? "/usr/bin/chromium";
const TRIP = "Plan a 3-day trip from Madrid to Paris for 2 people";
/** A worker's run of the rules reasoner takes a few seconds on a loaded box; the page streams it. */
const SEEN_MS = 90_000;

let postgres: ThrowawayPostgres | undefined;
let url: string;
let workers: ChildProcess[] = [];
let server: ServeProcess | undefined;
let web: { url: string; close: () => Promise<void> } | undefined;
let browser: BrowserContext | undefined;
let profile: string | undefined;
let client: Client;

beforeAll(async () => {
  const dist = buildChatApp();
  web = await serveStatic(dist);
  postgres = await startThrowawayPostgres();
  url = await postgres.createDatabase();
  const migrated = await runCli(["db", "migrate", "--db", url]);
  if (migrated.code !== 0) throw new Error(migrated.stderr);
  workers = [spawnCli(["worker", "--db", url]), spawnCli(["worker", "--db", url])];
  server = await startServe(["--db", url]);
  client = new Client({ apiUrl: server.url });
  profile = mkdtempSync(path.join(tmpdir(), "candor-chromium-"));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"],
  });
});

afterAll(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await web?.close();
  await server?.stop();
  const exited = workers.map((w) =>
    w.exitCode !== null || w.signalCode !== null ? Promise.resolve() : new Promise((r) => w.once("exit", r)),
  );
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill("SIGTERM");
  await Promise.all(exited);
  postgres?.stop();
});

async function openChat(assistantId: string): Promise<Page> {
  const page = await browser!.newPage();
  const query = new URLSearchParams({ apiUrl: server!.url, assistantId });
  await page.goto(`${web!.url}/?${query.toString()}`);
  return page;
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByPlaceholder("Type your message...").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

async function threadOf(page: Page): Promise<string> {
  await expect.poll(() => new URL(page.url()).searchParams.get("threadId"), { timeout: SEEN_MS }).toBeTruthy();
  return new URL(page.url()).searchParams.get("threadId")!;
}

/** Which worker the queue says ran the thread. */
async function workerOf(threadId: string): Promise<string | null> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ worker: string | null }>("SELECT worker FROM candor_runs WHERE thread_id = $1", [
      threadId,
    ]);
    return rows[0]?.worker ?? null;
  } finally {
    await c.end();
  }
}

async function onFailure<T>(page: Page, name: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (e) {
    const file = path.join(tmpdir(), `candor-serve-chat-${name}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    throw new Error(`${(e as Error).message}\n(screenshot: ${file})\n${server?.output().slice(-2000)}`, { cause: e });
  }
}

describe("the chat app against candor serve on PostgreSQL with two workers, in headless Chromium", () => {
  it("a trip typed in the chat is run by a worker: the page shows the plan and the answer", async () => {
    const page = await openChat("candor");
    await onFailure(page, "plain", async () => {
      await send(page, TRIP);
      await page
        .getByText(/Plan plan-\w+: 5 step\(s\)/)
        .first()
        .waitFor({ timeout: SEEN_MS });
      await page
        .getByText(/Run completed/)
        .first()
        .waitFor({ timeout: SEEN_MS });
      const thread = await threadOf(page);
      const state = await client.threads.getState<{ status: string; answer: string }>(thread);
      expect(state.values.status).toBe("completed");
      await page.getByText(state.values.answer.split("\n")[0]!).first().waitFor({ timeout: SEEN_MS });
      const names = workers.map((w) => `${hostname()}:${w.pid}`);
      expect(names).toContain(await workerOf(thread));
    });
    await page.close();
  });

  it("a trip that needs approval: accepted in the page, a worker finishes it", async () => {
    const cautious = await client.assistants.create({ graphId: "candor", context: { approvalThreshold: 0.99 } });
    const page = await openChat(cautious.assistant_id);
    await onFailure(page, "approval", async () => {
      await send(page, TRIP);
      await page
        .getByText(/needs approval: confidence 0\.\d\d is below 0\.99/)
        .first()
        .waitFor({ timeout: SEEN_MS });
      const thread = await threadOf(page);
      await expect
        .poll(async () => (await client.threads.get(thread)).status, { timeout: SEEN_MS })
        .toBe("interrupted");
      const accept = page.getByRole("button", { name: "Accept", exact: true });
      await accept.first().waitFor({ timeout: SEEN_MS });
      await accept.first().click();
      await page
        .getByText(/Run completed/)
        .first()
        .waitFor({ timeout: SEEN_MS });
      const state = await client.threads.getState<{ status: string; approval: { decision: string } }>(thread);
      expect(state.values.status).toBe("completed");
      expect(state.values.approval.decision).toBe("approve");
    });
    await page.close();
  });
});
