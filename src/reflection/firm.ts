/**
 * Firm statements. Seed 001 learns a preference from three rejections, so that one remark does not change every
 * later run; but "never fly Iberia again" is not a remark, and a person who says it should not have to be
 * disappointed twice more. A firm reason still only proposes its adjustment: it applies once the person confirms it
 * (`candor memory confirm <id>`), never on Candor's reading of their tone alone. The words are plain intensity
 * (English, and "never" in the other languages Candor reads), not any toolkit's domain.
 */
const FIRM: readonly RegExp[] = [
  /\bnever\b/i,
  /\balways\b/i,
  /\brefuse\b/i,
  /\bever again\b/i,
  /\banyone but\b/i,
  /\banything but\b/i,
  /\bunder no circumstances?\b/i,
  /\bno more\b/i,
  /\b(?:can't|cannot|can not) stand\b/i,
  /\bhate\b/i,
  /\bonly\b/i,
  /\b(?:i|we) (?:will not|won't)\b/i,
  /\bnot\b[^.!?]{0,40}\bagain\b/i,
  /\b(?:i'm|i am|we're|we are) done with\b/i,
  /\bavoid\b/i,
  /\bexcept\b/i,
  // "Never" in the other languages Candor reads: Spanish, French, German, Italian, Portuguese, Dutch.
  /\bnunca\b/i,
  /\bjam(?:[aá]s|ais)\b/i,
  /\b(?:nie wieder|niemals)\b/i,
  /\bmai più/i,
  /\bnooit\b/i,
];

/** Pure. Whether a reason states a preference firmly enough to offer its adjustment for confirmation at once. */
export function isFirm(reason: string): boolean {
  return FIRM.some((p) => p.test(reason));
}

/** The command that confirms a proposed adjustment. */
export function confirmHint(id: string): string {
  return `candor memory confirm ${id}`;
}
