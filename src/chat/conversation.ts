import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { InterruptRequest } from "../domain/approval.js";
import { decisionFromMessage, decisionMeaning, type MessageDecision } from "../domain/decisions.js";
import type { Notification } from "../domain/notification.js";
import type { PlanningRequestInput } from "../domain/request.js";
import type { Result } from "../result.js";

/*
 * Candor in a chat client (agent-chat-ui, the apps create-agent-chat-app makes, Studio's chat): a person's messages
 * come in on the `messages` channel, Candor's AI messages go out on it. Pure functions; nodes/chat.ts wires them.
 */

/** What a person sees of a run in a chat: the plan, failures and their recoveries, questions, answers, the end. */
const TOLD_IN_CHAT = new Set<Notification["kind"]>([
  "plan",
  "step_failed",
  "strategy",
  "escalation",
  "approval",
  "outcome",
]);

/**
 * The text of the conversation's last message when a person sent it: Candor answers every message it reads with
 * an AI message, so a human message last is one not read yet. Null when the last message is not a person's.
 */
export function unansweredHumanText(messages: readonly BaseMessage[] | undefined): string | null {
  const last = messages?.at(-1);
  return last && last.type === "human" ? last.text : null;
}

/** The request a conversation gives: its last human message is what the person wants done. */
export function requestFromConversation(messages: readonly BaseMessage[] | undefined): Result<PlanningRequestInput> {
  const text = [...(messages ?? [])]
    .reverse()
    .find((m) => m.type === "human")
    ?.text.trim();
  if (!text)
    return {
      ok: false,
      reason:
        "there is nothing to do: the input has no `request` and its `messages` hold no human message with text. Send a human message saying what you want done, or give `request.userIntent`",
    };
  return { ok: true, value: { userIntent: text } };
}

/**
 * The person's last message read as the answer to the request the thread waits on; null when the last message is
 * not theirs (the thread waits for a resume as usual). A message that is no answer gives the reason, which the
 * node puts in the question it asks again.
 */
export function answerFromChat(
  messages: readonly BaseMessage[] | undefined,
  request: InterruptRequest,
): Result<MessageDecision> | null {
  const text = unansweredHumanText(messages);
  return text === null ? null : decisionFromMessage(text, request);
}

/** How to answer a waiting request by typing, one decision a line (adjusting a plan needs the approval's edit). */
function howToAnswer(request: AskedRequest): string {
  const lines = request.decisions
    .filter((d) => d !== "adjust")
    .map((d) => `- **${d === "replan" ? "your guidance" : d}**: ${decisionMeaning(d, request)}`);
  return ["Answer with the buttons, or reply here:", ...lines].join("\n");
}

/** The part of a waiting request a chat needs to say how to answer it. */
interface AskedRequest {
  kind: string;
  decisions: readonly string[];
}

/** What a node's update gives a chat: the fields read here, all optional as in any update. */
export interface ChatUpdate {
  notifications?: readonly Notification[];
  pendingInterrupt?: AskedRequest | null;
  approval?: { decision: string; by: string | null; kind: string } | null;
  report?: unknown;
}

/**
 * Candor's AI messages for what one node just told the user, derived from its notifications: the plan, each
 * failure and its recovery, the question it asks (with how to answer it by typing), the reading of a person's
 * message as a decision, and at the end the answer with where the report is. Step starts, successes and progress
 * stay out of the chat (the notifications keep them). Ids come from the notifications, so a node that runs again
 * on resume writes the same messages, not new ones.
 */
export function chatReplies(input: {
  update: ChatUpdate;
  /** The person's message the node just read as a decision, when it did. */
  readMessage: string | null;
  answer: string | null;
  threadId: string | null;
}): AIMessage[] {
  const { update } = input;
  const told = (update.notifications ?? []).filter((n) => TOLD_IN_CHAT.has(n.kind));
  const out: AIMessage[] = [];
  told.forEach((n, i) => {
    const parts: string[] = [];
    if (i === 0 && input.readMessage !== null && update.approval)
      parts.push(
        `I read your message "${input.readMessage}" as **${update.approval.decision}** (${decisionMeaning(update.approval.decision, update.approval)}).`,
      );
    if (update.report !== undefined && n.kind === "outcome" && input.answer) parts.push(input.answer);
    parts.push(`**${n.title}**`);
    if (n.message) parts.push(n.message);
    // The question a node asks comes with its notification; how to answer it goes under the last one it told.
    if (i === told.length - 1 && update.pendingInterrupt) parts.push(howToAnswer(update.pendingInterrupt));
    if (update.report !== undefined && n.kind === "outcome")
      parts.push(
        `The full report is in this thread's state (\`report\`)${input.threadId ? `; with the CLI on the same database: \`candor report ${input.threadId}\`` : ""}.`,
      );
    out.push(new AIMessage({ id: `candor-${n.id}`, content: parts.join("\n\n") }));
  });
  return out;
}

/**
 * The reply to a message in a thread that already ran and waits for no decision of its own: one that ended, or
 * one still running whose only question is a worker's tool approval (asked again; its buttons answer it).
 */
export function chatReply(run: "ended" | "running", status: string, text: string): string {
  return run === "running"
    ? `Your message "${text}" is not read as an answer: this run waits for a tool call's approval, asked again below. Answer it with the approval's buttons (accept runs the call, ignore denies it).`
    : `This thread already ran (status: ${status}); your message "${text}" does not start another run. Start a new thread for a new request.`;
}
