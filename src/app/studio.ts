import { buildAgentGraph, RECURSION_LIMIT } from "../../graphs/agent.js";
import { defaultToolkits } from "./toolkits.js";

/**
 * LangGraph Studio's entry (langgraph.json): the default toolkits with the offline rules reasoner, compiled
 * without checkpointer or store because `langgraphjs dev` injects its own.
 */
export const graph = buildAgentGraph({ toolkits: defaultToolkits() })
  .compile({ name: "candor" })
  .withConfig({ recursionLimit: RECURSION_LIMIT });
