import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { RunnableLambda } from "@langchain/core/runnables";
import { describe, expect, it } from "vitest";
// LangGraph's entry gives LangChain its async-local run context, as it does whenever Candor's graph runs: without
// it a runnable's handlers are out of reach of the code it calls.
import "@langchain/langgraph";
import { Node } from "../../nodes/names.js";
import type { ExecutionFeedback } from "../../src/domain/feedback.js";
import { PLANNING_NODE } from "../../src/observability/attributes.js";
import { otlpTracesUrl } from "../../src/observability/otlp.js";
import { reportToolCall, type ToolCallReport } from "../../src/observability/tool-calls.js";

/*
 * The pure parts of Candor's tracing. The handler runs with OpenTelemetry's SDK in child processes
 * (test/e2e/otel.test.ts): under Vitest @opentelemetry/sdk-trace-base resolves to its ESM build (the package's
 * `module` field), whose imports Node cannot load (they name no file extension).
 */

describe("otlpTracesUrl", () => {
  it("takes the traces endpoint as given, else appends v1/traces to the base endpoint, else traces nothing", () => {
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(
      "http://collector:4318/v1/traces",
    );
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/base/" })).toBe(
      "http://collector:4318/base/v1/traces",
    );
    expect(
      otlpTracesUrl({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces:9999/in",
      }),
    ).toBe("http://traces:9999/in");
    expect(otlpTracesUrl({})).toBeNull();
  });

  it("traces nothing when OpenTelemetry is switched off, whatever the endpoint", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    expect(otlpTracesUrl({ ...endpoint, OTEL_SDK_DISABLED: true })).toBeNull();
    expect(otlpTracesUrl({ ...endpoint, OTEL_TRACES_EXPORTER: " None " })).toBeNull();
    expect(otlpTracesUrl({ ...endpoint, OTEL_SDK_DISABLED: false, OTEL_TRACES_EXPORTER: "otlp" })).not.toBeNull();
  });

  it("names the plan after the graph's planning node", () => {
    // A renamed UNDERSTAND node would silently lose the plan span.
    expect(PLANNING_NODE).toBe(Node.UNDERSTAND);
  });
});

const FEEDBACK = {
  taskId: "s1",
  dispatch: 1,
  workerType: "reader",
  params: {},
  feedbackType: "FAILURE",
  outputs: {},
  errors: ["boom"],
  failureClass: "timeout",
  durationMs: 1,
  cost: 0,
  at: new Date(0).toISOString(),
  attempt: 1,
  tool: "read_file",
  attempts: [],
  errorType: null,
  trace: null,
  evidence: null,
  limits: [],
} as unknown as ExecutionFeedback;

/** Records the tool calls it hears of, and the run ids LangChain started, to check the parent it is given. */
class Listener extends BaseCallbackHandler {
  name = "listener";
  override awaitHandlers = true;
  readonly heard: { report: ToolCallReport; parentRunId: string | undefined }[] = [];
  readonly started: string[] = [];
  override handleChainStart(_c: unknown, _i: unknown, runId: string): void {
    this.started.push(runId);
  }
  handleCandorToolCall(report: ToolCallReport, parentRunId: string | undefined): void {
    this.heard.push({ report, parentRunId });
  }
}

describe("reportToolCall", () => {
  it("tells the observers among the run's handlers, with the run the call was made in", async () => {
    const listener = new Listener();
    // An observer that throws loses its own record, and neither the step nor the next observer notices.
    const throwing = new (class extends BaseCallbackHandler {
      name = "throwing";
      handleCandorToolCall(): void {
        throw new Error("observer bug");
      }
    })();
    const step = RunnableLambda.from(() => {
      reportToolCall(FEEDBACK, 5);
      return "done";
    });
    await expect(step.invoke(null, { callbacks: [throwing, listener] })).resolves.toBe("done");
    expect(listener.heard).toHaveLength(1);
    expect(listener.heard[0]!.parentRunId).toBe(listener.started[0]);
    expect(listener.heard[0]!.report).toMatchObject({ feedback: FEEDBACK, startedAt: 5 });
    expect(listener.heard[0]!.report.endedAt).toBeGreaterThan(5);
  });

  it("says nothing outside a run, or of a failure no tool had", async () => {
    const listener = new Listener();
    reportToolCall(FEEDBACK, 0);
    const step = RunnableLambda.from(() => reportToolCall({ ...FEEDBACK, tool: null }, 0));
    await step.invoke(null, { callbacks: [listener] });
    expect(listener.heard).toEqual([]);
  });
});
