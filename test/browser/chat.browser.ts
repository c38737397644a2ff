import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../e2e/dev-server.js";
import { buildChatApp, serveStatic } from "./app.js";

/*
 * Issue 13 item 5, end to end in a real browser: the web app create-agent-chat-app ships (its Vite template),
 * built and served locally against `langgraphjs dev`, driven by Debian's headless Chromium. A person types a trip
 * and sees the plan and the answer; asks for one that needs approval, sees it, accepts it in the page, sees the end.
 */

const CHROMIUM = process.env.CANDOR_CHROMIUM ?? "/usr/bin/chromium";
const TRIP = "Plan a 3-day trip from Madrid to Paris for 2 people";
/** A run of the rules reasoner takes a few seconds on a loaded box; the page polls nothing, it streams. */
const SEEN_MS = 90_000;

let server: DevServer | undefined;
let web: { url: string; close: () => Promise<void> } | undefined;
let browser: BrowserContext | undefined;
let profile: string | undefined;
let client: Client;

beforeAll(async () => {
  const dist = buildChatApp();
  web = await serveStatic(dist);
  server = await startDevServer();
  client = new Client({ apiUrl: server.apiUrl });
  profile = mkdtempSync(path.join(tmpdir(), "candor-chromium-"));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await web?.close();
  await server?.stop();
});

/** Opens the app on a graph or assistant, as its setup form would (it reads both from the query string). */
async function openChat(assistantId: string): Promise<Page> {
  const page = await browser!.newPage();
  const query = new URLSearchParams({ apiUrl: server!.apiUrl, assistantId });
  await page.goto(`${web!.url}/?${query.toString()}`);
  return page;
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByPlaceholder("Type your message...").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

/** The thread the page created, from its URL (the app keeps it in `threadId`). */
async function threadOf(page: Page): Promise<string> {
  await expect.poll(() => new URL(page.url()).searchParams.get("threadId"), { timeout: SEEN_MS }).toBeTruthy();
  return new URL(page.url()).searchParams.get("threadId")!;
}

/** Saves what the page shows when a step fails, so a red run says what the person would have seen. */
async function onFailure<T>(page: Page, name: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (e) {
    const file = path.join(tmpdir(), `candor-chat-${name}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    throw new Error(`${(e as Error).message}\n(screenshot: ${file})`, { cause: e });
  }
}

describe("Candor in the chat app create-agent-chat-app makes, in headless Chromium", () => {
  it("a trip typed in the chat: the plan, then the answer and where the report is", async () => {
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
      const state = await client.threads.getState<{ status: string; answer: string }>(await threadOf(page));
      expect(state.values.status).toBe("completed");
      // The answer's first line, as the page renders it.
      await page.getByText(state.values.answer.split("\n")[0]!).first().waitFor({ timeout: SEEN_MS });
      await page
        .getByText(/The full report is in this thread's state/)
        .first()
        .waitFor({ timeout: SEEN_MS });
    });
    await page.close();
  });

  it("a trip that needs approval: the approval is shown, accepted in the page, and the run finishes", async () => {
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
      // The app's own approval view (Agent Inbox's), with its Accept button.
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
