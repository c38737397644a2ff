import { z } from "zod";
import { CandorError, ErrorCode } from "../../errors.js";
import { judgedRunOf } from "../../reflection/feedback.js";
import { recordFeedback, type LearningOutcome } from "../../reflection/learn.js";
import type { ReflectionLimits } from "../../reflection/limits.js";
import { pricesFrom } from "../../reasoning/prices.js";
import type { CandorEnv } from "../../env.js";
import { RulesReasoner } from "../../reasoning/rules.js";
import type { Reasoner } from "../../reasoning/types.js";
import { ToolRegistry } from "../../tools/registry.js";
import { closing } from "../closing.js";
import { Exit, type CliIo } from "../io.js";
import { CommonFlags, parseFlags } from "../options.js";
import { noteLine } from "../render.js";
import { buildToolkits } from "../session.js";
import { openThread } from "../open-thread.js";

const FeedbackFlags = CommonFlags.extend({
  accept: z.boolean().default(false),
  reject: z.string().trim().min(1, 'needs a reason, e.g. --reject "the report was too vague"').optional(),
  comment: z.string().trim().min(1, 'needs text, e.g. --comment "a clear report"').optional(),
});

/**
 * `candor feedback <thread> --accept [--comment "…"] | --reject "<reason>"`: stores the verdict with the run's
 * episode; a rejection is reflected on at once (with the model when the run used one and OPENAI_API_KEY is set).
 */
export async function feedbackCommand(rawId: string, rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(FeedbackFlags, rawFlags);
  if (flags.accept === (flags.reject !== undefined))
    throw new CandorError(
      `Say how run ${rawId} went with exactly one of --accept or --reject "<reason>", e.g. ${io.invokedAs} feedback ${rawId} --reject "the report was too vague".`,
      ErrorCode.INVALID_REQUEST,
    );
  const { threadId, session, record } = await openThread(rawId, flags.db, io, "read");
  return closing(
    session,
    async () => {
      const run = await judgedRunOf(session.graph, threadId);
      const reasoner = await reflectingReasoner(record?.reasoner ?? "rules", record?.model ?? null, io);
      const decisionLog = session.persistence.decisions.open(io.env.CANDOR_LOG_LEVEL ?? "info");
      const outcome = await recordFeedback(
        {
          store: session.persistence.store,
          registry: ToolRegistry.create(buildToolkits(record?.faults ?? [])),
          reasoner,
          // The database's own decision log (a file beside SQLite, a table in PostgreSQL).
          decisionLog,
          limits: limitsFrom(io.env),
        },
        run,
        {
          verdict: flags.accept ? "accepted" : "rejected",
          reason: flags.reject ?? null,
          comment: flags.comment ?? null,
        },
      );
      if (flags.json) io.out(JSON.stringify(feedbackJson(threadId, outcome), null, 2));
      else io.out(outcome.messages.join("\n"));
      await decisionLog.flush();
      return Exit.COMPLETED;
    },
    { where: session.persistence.dbPath },
  );
}

/** The run's own reasoner reflects: the model when the run used one and a key is set, else the rules (and says so). */
async function reflectingReasoner(kind: "rules" | "llm", model: string | null, io: CliIo): Promise<Reasoner> {
  if (kind === "rules") return new RulesReasoner();
  if (!io.env.OPENAI_API_KEY) {
    io.err(noteLine(`The run used model ${model ?? "?"}, but OPENAI_API_KEY is not set: the rules reflect instead.`));
    return new RulesReasoner();
  }
  const [{ createChatModel }, { LlmReasoner }] = await Promise.all([
    import("../../reasoning/model.js"),
    import("../../reasoning/llm.js"),
  ]);
  const chat = createChatModel({
    apiKey: io.env.OPENAI_API_KEY,
    baseUrl: io.env.OPENAI_BASE_URL,
    model: model ?? undefined,
  });
  return new LlmReasoner({ model: chat, fallback: new RulesReasoner(), onFallback: (n) => io.err(noteLine(n)) });
}

/** The reflection budget and prices from the environment; a price table that is not valid is refused. */
function limitsFrom(env: CandorEnv): Partial<ReflectionLimits> {
  const limits: Partial<ReflectionLimits> = {};
  if (env.CANDOR_REFLECTION_BUDGET_USD !== undefined) limits.dailyBudgetUsd = env.CANDOR_REFLECTION_BUDGET_USD;
  if (env.CANDOR_MODEL_PRICES !== undefined || env.CANDOR_PRICES_FILE !== undefined) limits.prices = pricesFrom(env);
  return limits;
}

function feedbackJson(threadId: string, o: LearningOutcome) {
  return {
    threadId,
    evaluation: o.evaluation,
    reflection: o.reflection,
    notStored: o.notStored,
    patterns: o.patterns,
    adjustments: o.adjustments,
    messages: o.messages,
  };
}
