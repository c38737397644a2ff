import { createHash, timingSafeEqual } from "node:crypto";
import { CandorError, ErrorCode } from "../errors.js";

/** Shorter than this, a token can be guessed; `--auth-token` refuses it. */
export const MIN_TOKEN_LENGTH = 16;

/**
 * Checks a token given with `--auth-token` or CANDOR_SERVE_TOKEN before the server starts.
 * @throws CandorError INVALID_REQUEST saying what was wrong and how to make a good one.
 */
export function checkToken(token: string): string {
  const why =
    token.length < MIN_TOKEN_LENGTH
      ? `it has ${token.length} character(s), fewer than ${MIN_TOKEN_LENGTH}`
      : /\s/.test(token)
        ? "it contains white space, which an Authorization header cannot carry"
        : // eslint-disable-next-line no-control-regex -- a control character is what is refused
          /[\u0000-\u001f\u007f]/.test(token)
          ? "it contains a control character"
          : null;
  if (why === null) return token;
  throw new CandorError(
    `The serve token is unusable: ${why}. Use a long random one, e.g. --auth-token "$(openssl rand -hex 32)" (or set CANDOR_SERVE_TOKEN).`,
    ErrorCode.INVALID_REQUEST,
  );
}

/**
 * The token a request carries: `Authorization: Bearer <token>` (curl, most HTTP clients) or `x-api-key: <token>`
 * (what @langchain/langgraph-sdk sends for its `apiKey` option, and so useStream and the chat apps). Null when it
 * carries neither.
 */
export function presentedToken(headers: Headers): string | null {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "");
  return bearer?.[1] ?? headers.get("x-api-key");
}

/** Whether `presented` is the token, compared in constant time (digests, so neither length leaks either). */
export function tokenMatches(presented: string | null, token: string): boolean {
  if (presented === null) return false;
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(presented), digest(token));
}
