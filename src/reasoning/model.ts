import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatOpenAI } from "@langchain/openai";
import { CandorError, ErrorCode } from "../errors.js";

/** How to reach a chat model: OpenAI or any OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp). */
export interface ChatModelOptions {
  apiKey?: string;
  /** An OpenAI-compatible endpoint, e.g. http://localhost:11434/v1; absent means api.openai.com. */
  baseUrl?: string;
  /** Model name; absent means DEFAULT_CHAT_MODEL. */
  model?: string;
  temperature?: number;
  /**
   * Retries after a failed call (default 1). LangChain's own default is 6 with exponential backoff, which
   * turns a dead server into a minute of silence before the rules fallback can take over.
   */
  maxRetries?: number;
}

/** A model that supports json_schema structured output (ChatOpenAI's own default, gpt-3.5-turbo, does not). */
const DEFAULT_CHAT_MODEL = "gpt-4o-mini";

/**
 * The default chat model: `ChatOpenAI`. Throws CONFIGURATION when there is no API key or the base URL is not
 * a URL, before any call is made.
 */
export function createChatModel(opts: ChatModelOptions): BaseChatModel {
  const model = opts.model ?? DEFAULT_CHAT_MODEL;
  if (!opts.apiKey) {
    throw new CandorError(
      `No API key for model "${model}": set OPENAI_API_KEY, or omit --model to use the offline rules reasoner.`,
      ErrorCode.CONFIGURATION,
    );
  }
  if (model.trim().length === 0) {
    throw new CandorError(
      "The model name is empty: pass a model such as gpt-4o-mini, or omit --model to use the offline rules reasoner.",
      ErrorCode.CONFIGURATION,
    );
  }
  if (opts.baseUrl && !URL.canParse(opts.baseUrl)) {
    throw new CandorError(
      `The model base URL "${opts.baseUrl}" is not a URL: set OPENAI_BASE_URL to something like http://localhost:11434/v1.`,
      ErrorCode.CONFIGURATION,
    );
  }
  return new ChatOpenAI({
    model,
    apiKey: opts.apiKey,
    maxRetries: opts.maxRetries ?? 1,
    ...(opts.temperature !== undefined ? { temperature: opts.temperature } : {}),
    ...(opts.baseUrl ? { configuration: { baseURL: opts.baseUrl } } : {}),
  });
}
