import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { FakeOpenAIServer } from "../fakes/fake-openai-server.js";
import { startOtlpReceiver, type ReceivedSpan } from "../fakes/otlp-receiver.js";
import { childEnv, collect, ROOT, STACK_LINE, tempDir, type CliResult } from "./helpers.js";

const LONG = 120_000;
/** A rules run whose read fails (resource_unavailable), is skipped by a revision, and so fails: exit 4. */
const REQUEST = "count the words of README.md";
const FAULT = "read_file=unavailable*1";
/** OpenTelemetry's SDK and exporter: a run without an endpoint must load none of them. */
const SDK_PACKAGES = ["exporter-trace-otlp-http", "otlp-exporter-base", "resources", "sdk-trace", "sdk-trace-base"];

const tmp = tempDir("candor-otel-");
afterAll(() => tmp.cleanup());

/** Loaded before the CLI: at exit it prints which @opentelemetry packages the process loaded (all are CommonJS). */
const PRELOAD = path.join(tmp.dir, "report-otel-modules.mjs");
writeFileSync(
  PRELOAD,
  `import { createRequire } from "node:module";
const cache = createRequire(import.meta.url).cache;
process.on("exit", () => {
  const names = Object.keys(cache).flatMap((k) => /[\\\\/]@opentelemetry[\\\\/]([^\\\\/]+)[\\\\/]/.exec(k)?.[1] ?? []);
  process.stderr.write("otel-modules: " + [...new Set(names)].sort().join(",") + "\\n");
});
`,
);

/** Runs the CLI with the preload, with `env` over an environment that has no OTEL_ or LANGSMITH_ variable. */
function runCli(args: readonly string[], env: Record<string, string>): Promise<CliResult> {
  return runScript("src/cli/main.ts", args, env);
}

function runScript(script: string, args: readonly string[], env: Record<string, string>): Promise<CliResult> {
  const base = childEnv();
  for (const key of Object.keys(base)) if (/^(OTEL_|LANGSMITH_|LANGCHAIN_)/.test(key)) delete base[key];
  const child = spawn(process.execPath, ["--import", pathToFileURL(PRELOAD).href, "--import", "tsx", script, ...args], {
    cwd: ROOT,
    env: { ...base, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return collect(child);
}

/** The @opentelemetry packages the run loaded, from the preload's line. */
function loadedOtel(stderr: string): string[] {
  const line = /^otel-modules: (.*)$/m.exec(stderr);
  if (!line) throw new Error(`the preload did not report: ${stderr}`);
  return line[1] ? line[1].split(",") : [];
}

function only(spans: readonly ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  expect(
    found.map((s) => s.name),
    `exactly one span named ${name}`,
  ).toEqual([name]);
  return found[0]!;
}

/** The names of a span's ancestors, nearest first; throws on a parent that was never received. */
function ancestors(spans: readonly ReceivedSpan[], span: ReceivedSpan): string[] {
  const names: string[] = [];
  for (let s = span; s.parentSpanId !== "";) {
    const parent = spans.find((p) => p.spanId === s.parentSpanId);
    if (!parent) throw new Error(`span ${s.name} names a parent ${s.parentSpanId} that was never sent`);
    names.push(parent.name);
    s = parent;
  }
  return names;
}

describe("OpenTelemetry traces over OTLP/HTTP", () => {
  it(
    "a failing run: invoke_agent per thread, the plan and the revision, execute_tool failed with its class",
    async () => {
      const receiver = await startOtlpReceiver();
      try {
        const r = await runCli(
          ["run", REQUEST, "--fault", FAULT, "--thread", "otel-fail", "--db", path.join(tmp.dir, "fail.db")],
          { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
        );
        expect(r.code, r.stderr).toBe(4);
        expect(receiver.unexpected).toEqual([]);
        expect(loadedOtel(r.stderr)).toEqual(expect.arrayContaining(["exporter-trace-otlp-http", "sdk-trace-base"]));
        const spans = receiver.spans;
        // The root ends last: it reached the receiver, so the CLI flushed before it exited.
        const root = only(spans, "invoke_agent candor");
        expect(root.parentSpanId).toBe("");
        expect(root.attributes).toMatchObject({
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.name": "candor",
          "gen_ai.conversation.id": "otel-fail",
          "candor.run.status": "failed",
        });
        expect(root.resource).toMatchObject({ "service.name": "candor" });
        expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([root.traceId]));

        const plan = only(spans, "plan");
        expect(ancestors(spans, plan)).toEqual(["understand", "invoke_agent candor"]);
        expect(plan.attributes).toMatchObject({ "candor.plan.steps": 2 });

        const read = only(spans, "execute_tool read_file");
        expect(read.attributes).toMatchObject({
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": "read_file",
          "error.type": "resource_unavailable",
          "candor.step.id": "text",
          "candor.error.code": "RESOURCE_UNAVAILABLE",
          "gen_ai.conversation.id": "otel-fail",
        });
        expect(read.statusCode).toBe(2);
        expect(read.statusMessage).toContain("unavailable");
        // Each eager step runs as a LangGraph task of the graph, beside the execute node that started it.
        expect(ancestors(spans, read)).toEqual(["step", "invoke_agent candor"]);

        const revision = only(spans, "revise SKIP");
        expect(revision.attributes).toMatchObject({
          "candor.revision.strategy": "SKIP",
          "candor.revision.failed_step": "text",
          "candor.revision.failure_class": "resource_unavailable",
        });
        expect(ancestors(spans, revision)).toEqual(["skip", "invoke_agent candor"]);
        // The step that never ran (its input was skipped) called no tool.
        expect(spans.filter((s) => s.name.startsWith("execute_tool")).map((s) => s.name)).toEqual([
          "execute_tool read_file",
        ]);
        // Nodes are children of the run, once per visit (execute ran again after the revision).
        expect(spans.filter((s) => s.name === "execute")).toHaveLength(2);
        for (const node of ["execute", "select_strategy", "synthesize", "reflect"]) {
          const visits = spans.filter((s) => s.name === node);
          expect(visits.length, node).toBeGreaterThan(0);
          for (const visit of visits) expect(ancestors(spans, visit)).toEqual(["invoke_agent candor"]);
        }
      } finally {
        await receiver.close();
      }
    },
    LONG,
  );

  it(
    "model calls are chat spans with the model, the provider and the tokens each call used",
    async () => {
      const fake = new FakeOpenAIServer([
        {
          json: {
            objective: "Say what the project is",
            contextSummary: null,
            confidence: 0.9,
            steps: [
              {
                id: "s1",
                description: "Read the project's README and say what the project is",
                workerType: "reader",
                tools: ["read_file"],
                paramsJson: null,
                dependsOn: [],
                expectedOutputs: ["text"],
              },
            ],
            understanding: null,
          },
        },
        { toolCall: { name: "read_file", arguments: { path: "README.md" } } },
        "README.md says Candor is a planner-executor agent.",
        { json: { parts: [{ partId: "p1", answered: true, why: null }] } },
        "Candor is a planner-executor agent.",
      ]);
      const server = await fake.start();
      const receiver = await startOtlpReceiver();
      try {
        const r = await runCli(
          [
            "run",
            "read README.md",
            "--db",
            path.join(tmp.dir, "model.db"),
            "--model",
            "fake-model",
            "--approval-threshold",
            "0",
          ],
          {
            OPENAI_API_KEY: "test-key",
            OPENAI_BASE_URL: server.baseUrl,
            OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.endpoint}/v1/traces`,
          },
        );
        expect(r.code, r.stderr).toBe(0);
        fake.assertConsumed();
        expect(receiver.unexpected).toEqual([]);
        const spans = receiver.spans;
        const root = only(spans, "invoke_agent candor");
        expect(root.attributes["gen_ai.conversation.id"]).toMatch(/^run-/);
        const chats = spans.filter((s) => s.name === "chat fake-model");
        expect(chats).toHaveLength(fake.requests.length);
        for (const chat of chats) {
          expect(chat.kind).toBe(3);
          expect(chat.attributes).toMatchObject({
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "fake-model",
            "gen_ai.provider.name": "openai",
            "gen_ai.system": "openai",
            // The fake server reports 10 prompt and 10 completion tokens for every answer.
            "gen_ai.usage.input_tokens": 10,
            "gen_ai.usage.output_tokens": 10,
          });
          expect(chat.attributes["gen_ai.conversation.id"]).toBe(root.attributes["gen_ai.conversation.id"]);
          expect(ancestors(spans, chat).at(-1)).toBe("invoke_agent candor");
        }
        expect(ancestors(spans, chats[0]!)).toEqual(["understand", "invoke_agent candor"]);
        // The worker's loop: its model asks for the read, and the call runs in the loop's tool node.
        expect(ancestors(spans, chats[1]!)).toContain("worker");
        const read = only(spans, "execute_tool read_file");
        expect(read.statusCode).toBe(0);
        expect(read.attributes).not.toHaveProperty("error.type");
        expect(ancestors(spans, read)).toContain("worker");
      } finally {
        await receiver.close();
        await server.close();
      }
    },
    LONG,
  );

  it(
    "in an app: a run that stops for approval ends its spans interrupted, not failed; one inside the app's span nests",
    async () => {
      const r = await runScript("test/graph/child-otel.ts", [path.join(tmp.dir, "child.db")], {});
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as {
        app: string;
        spans: {
          name: string;
          traceId: string;
          spanId: string;
          parentSpanId: string;
          attributes: Record<string, unknown>;
          statusCode: number;
        }[];
      };
      const roots = out.spans.filter((s) => s.name === "invoke_agent candor");
      expect(roots.map((s) => s.attributes["gen_ai.conversation.id"])).toEqual([
        "otel-approval",
        "otel-nested",
        "otel-in-runnable",
      ]);
      const [alone, nested, inRunnable] = roots;
      expect(alone!.parentSpanId).toBe("");
      expect(nested!.parentSpanId).toBe(out.app);
      // The graph's run has a parent run the handler never saw: it is still the trace's root, and its nodes under it.
      expect(inRunnable!.parentSpanId).toBe("");
      const understand = out.spans.filter((s) => s.name === "understand" && s.traceId === inRunnable!.traceId);
      expect(understand.map((s) => s.parentSpanId)).toEqual([inRunnable!.spanId]);
      const approval = out.spans.filter((s) => s.traceId === alone!.traceId);
      // The worker's gate asked a person: its node and the worker around it end interrupted, and nothing failed.
      expect(approval.filter((s) => s.attributes["candor.interrupted"] === true).map((s) => s.name)).toContain(
        "worker",
      );
      expect(approval.filter((s) => s.statusCode === 2).map((s) => s.name)).toEqual([]);
      // Asking is not calling: the tool has not run, so there is no execute_tool span.
      expect(approval.filter((s) => s.name.startsWith("execute_tool"))).toEqual([]);
    },
    LONG,
  );

  it(
    "without an endpoint a run loads none of OpenTelemetry's SDK and ends as it does traced",
    async () => {
      const r = await runCli(["run", REQUEST, "--fault", FAULT, "--db", path.join(tmp.dir, "plain.db")], {});
      expect(r.code, r.stderr).toBe(4);
      const loaded = loadedOtel(r.stderr);
      expect(loaded.filter((p) => SDK_PACKAGES.includes(p))).toEqual([]);
      expect(r.stderr).not.toContain("OpenTelemetry");
    },
    LONG,
  );

  it(
    "an endpoint nobody listens on: the run completes with its own exit code and one warning line",
    async () => {
      // A port that was free a moment ago and is closed now: connections to it are refused.
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
      const { port } = probe.address() as AddressInfo;
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      const r = await runCli(["run", REQUEST, "--fault", FAULT, "--db", path.join(tmp.dir, "closed.db")], {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      });
      expect(r.code, r.stderr).toBe(4);
      const warnings = r.stderr.split("\n").filter((line) => /OpenTelemetry|ECONNREFUSED/.test(line));
      expect(warnings).toEqual([
        expect.stringMatching(
          new RegExp(
            `^OpenTelemetry spans were not all sent to http://127\\.0\\.0\\.1:${port}/v1/traces \\(.*ECONNREFUSED.*\\); the trace may be incomplete\\.$`,
          ),
        ),
      ]);
      expect(r.stderr).not.toMatch(STACK_LINE);
    },
    LONG,
  );
});
