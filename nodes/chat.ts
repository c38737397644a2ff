import { randomUUID } from "node:crypto";
import { END, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { AIMessage } from "@langchain/core/messages";
import { chatReplies, chatReply, requestFromConversation, unansweredHumanText } from "../src/chat/conversation.js";
import { PlanningRequest } from "../src/domain/request.js";
import { nextOf } from "../src/domain/next.js";
import { CandorError, ErrorCode } from "../src/errors.js";
import { threadIdOf } from "./deps.js";
import { Node } from "./names.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";

export type StateNode = (state: AgentStateValue, config: LangGraphRunnableConfig) => Promise<AgentStateUpdate>;

/**
 * Wraps a node so what it tells the user is also said in the chat (src/chat/conversation.ts): the one place AI
 * messages are made. The node itself is unchanged; its update gains `messages` when it told something a chat shows.
 */
export function withChat(node: StateNode): StateNode {
  return async (state, config) => {
    const update = await node(state, config);
    const replies = chatReplies({
      // An update's list may be an Overwrite; the nodes wrapped here only append plain lists.
      update: { ...update, notifications: Array.isArray(update.notifications) ? update.notifications : [] },
      readMessage: update.approval?.by === "chat" ? unansweredHumanText(state.messages) : null,
      answer: update.answer ?? state.answer,
      threadId: threadIdOf(config),
    });
    return replies.length > 0 ? { ...update, messages: replies } : update;
  };
}

export type FromStart = typeof Node.UNDERSTAND | typeof Node.HUMAN_INTERRUPT | typeof Node.CONVERSE;

/**
 * Where a run starts. Chat clients send a person's reply as a new message (a new run), not as a resume: a message
 * while the thread waits for a decision goes to human_interrupt, which reads it as the answer. A conversation with
 * no `request`, or a message to a thread that already ran, goes to converse. Otherwise, as always, understand.
 */
export function routeFromStart(state: AgentStateValue): FromStart {
  const text = unansweredHumanText(state.messages);
  if (text !== null && nextOf(state).kind === "ask") return Node.HUMAN_INTERRUPT;
  if (state.plan ? text !== null : !state.request) return Node.CONVERSE;
  return Node.UNDERSTAND;
}

/**
 * CONVERSE: the request from the conversation (its last human message) when none was given; a clear error when
 * there is none. In a thread that already ran, it says why the message starts nothing (the run ends there). In a
 * thread still running — a worker's tool call waiting for approval, whose interrupt a new message discards — it
 * says the question is asked again, and execute dispatches the waiting step again, so the approval is not lost.
 */
export function converseNode() {
  return async (state: AgentStateValue): Promise<AgentStateUpdate> => {
    if (state.plan) {
      const text = unansweredHumanText(state.messages) ?? "";
      const reply = chatReply(nextOf(state).kind === "end" ? "ended" : "running", state.status, text);
      return { messages: [new AIMessage({ id: `candor-${randomUUID()}`, content: reply })] };
    }
    const request = requestFromConversation(state.messages);
    if (!request.ok) throw new CandorError(`No request: ${request.reason}.`, ErrorCode.INVALID_REQUEST);
    return { request: PlanningRequest.parse(request.value) };
  };
}

export type AfterConverse = typeof Node.UNDERSTAND | typeof Node.EXECUTE | typeof END;

/**
 * A request taken from the conversation → understand; an ended run → the end (a message to its thread starts
 * nothing); a run still going → execute, which dispatches a step waiting for its tool approval again. A thread
 * waiting for a person's decision never gets here (routeFromStart sends the message to human_interrupt).
 */
export function routeAfterConverse(state: AgentStateValue): AfterConverse {
  if (!state.plan) return Node.UNDERSTAND;
  const next = nextOf(state);
  switch (next.kind) {
    case "end":
      return END;
    case "execute":
    case "ask":
    case "choose_recovery":
    case "recover":
    case "replan":
      return Node.EXECUTE;
  }
}
