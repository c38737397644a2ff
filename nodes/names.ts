/** Node ids of the main graph. The five node kinds of the user's card are UNDERSTAND, EXECUTE, SYNTHESIZE, REFLECT and HUMAN_INTERRUPT. */
export const Node = {
  /** Chat input: the request from a conversation, or a reply to a thread that already ran (nodes/chat.ts). */
  CONVERSE: "converse",
  UNDERSTAND: "understand",
  EXECUTE: "execute",
  WORKER: "worker",
  SYNTHESIZE: "synthesize",
  SELECT_STRATEGY: "select_strategy",
  RETRY_DIFFERENT_AGENT: "retry_different_agent",
  RETRY_WITH_PARAMS: "retry_with_params",
  SWAP_TOOL: "swap_tool",
  DECOMPOSE: "decompose",
  ADJUST_PARAMETERS: "adjust_parameters",
  FIX_DEPENDENCIES: "fix_dependencies",
  FIND_WORKAROUND: "find_workaround",
  SKIP: "skip",
  HUMAN_INTERRUPT: "human_interrupt",
  REPLAN_WITH_GUIDANCE: "replan_with_guidance",
  REFLECT: "reflect",
  FINALIZE: "finalize",
} as const;
export type NodeId = (typeof Node)[keyof typeof Node];
