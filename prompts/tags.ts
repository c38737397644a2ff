/**
 * Wraps a prompt section in an XML-style tag so the model can tell the parts apart (open_deep_research style).
 * An empty body becomes "(none)" so a section never looks truncated.
 */
export function tag(name: string, body: string): string {
  const text = body.trim();
  return `<${name}>\n${text.length > 0 ? text : "(none)"}\n</${name}>`;
}

/** A bulleted list, one item a line. */
export function bullets(items: readonly string[]): string {
  return items.map((item) => `- ${item}`).join("\n");
}
