import { ChatOpenAI } from "@langchain/openai";
import { ModelPlan } from "../../src/domain/plan.js";
import { FakeOpenAIServer } from "./fake-openai-server.js";

const good = { objective: "o", contextSummary: null, confidence: 0.8, steps: [{ id: "a", description: "d", workerType: "reader", tools: ["fetch_data"], paramsJson: null, dependsOn: [], expectedOutputs: null }] };
for (const streaming of [false, true]) {
  const fake = new FakeOpenAIServer([{ json: good }, "```json\n{\"objective\":\"o\",}\n```", { json: { foo: 1 } }]);
  const { baseUrl, close } = await fake.start();
  const model = new ChatOpenAI({ model: "gpt-4o-mini", apiKey: "k", configuration: { baseURL: baseUrl }, maxRetries: 0, streaming });
  const s = model.withStructuredOutput(ModelPlan, { includeRaw: true });
  for (let i = 0; i < 3; i++) {
    try {
      const out = await s.invoke("hi");
      console.log(streaming, i, "parsed", JSON.stringify(out.parsed)?.slice(0, 80), "raw", JSON.stringify((out.raw as any).content).slice(0, 80));
    } catch (e) {
      console.log(streaming, i, "THREW", (e as Error).constructor.name, (e as Error).message.slice(0, 200));
    }
  }
  const b = fake.requests[0]!.body;
  console.log(JSON.stringify({ stream: b.stream, rf: b.response_format, tools: b.tools, so: b.stream_options }).slice(0, 1500));
  console.log("unexpected", fake.unexpected);
  await close();
}
