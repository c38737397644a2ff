/*
 * The names a Candor trace uses, apart from the handler so that reading them loads nothing of OpenTelemetry.
 */

/** The attribute names of the GenAI conventions Candor sets, written out rather than taken from a package. */
export const GenAi = {
  OPERATION: "gen_ai.operation.name",
  AGENT_NAME: "gen_ai.agent.name",
  CONVERSATION_ID: "gen_ai.conversation.id",
  PROVIDER: "gen_ai.provider.name",
  /** The older name of gen_ai.provider.name, which many back ends still read. */
  SYSTEM: "gen_ai.system",
  REQUEST_MODEL: "gen_ai.request.model",
  REQUEST_TEMPERATURE: "gen_ai.request.temperature",
  REQUEST_MAX_TOKENS: "gen_ai.request.max_tokens",
  RESPONSE_MODEL: "gen_ai.response.model",
  FINISH_REASONS: "gen_ai.response.finish_reasons",
  INPUT_TOKENS: "gen_ai.usage.input_tokens",
  OUTPUT_TOKENS: "gen_ai.usage.output_tokens",
  TOOL_NAME: "gen_ai.tool.name",
  TOOL_TYPE: "gen_ai.tool.type",
  ERROR_TYPE: "error.type",
} as const;

/** Candor's own attributes, beside the conventions'. */
export const CandorAttr = {
  NODE: "candor.node",
  STEP_ID: "candor.step.id",
  DISPATCH: "candor.step.dispatch",
  ATTEMPTS: "candor.tool.attempts",
  OUTCOME: "candor.outcome",
  ERROR_CODE: "candor.error.code",
  PLAN_ID: "candor.plan.id",
  PLAN_STEPS: "candor.plan.steps",
  PLAN_CONFIDENCE: "candor.plan.confidence",
  REVISION_ID: "candor.revision.id",
  STRATEGY: "candor.revision.strategy",
  FAILED_STEP: "candor.revision.failed_step",
  FAILURE_CLASS: "candor.revision.failure_class",
  RUN_STATUS: "candor.run.status",
  INTERRUPTED: "candor.interrupted",
} as const;

/** The node whose plan is the run's plan (nodes/names.ts Node.UNDERSTAND; a test holds the two together). */
export const PLANNING_NODE = "understand";
