/**
 * The request the CLI suggests when it needs an example: a trip the travel demo's agents plan. Its own module, so
 * the CLI's help text names it without loading the toolkits (and the travel gazetteer) it is planned with.
 */
export const EXAMPLE_REQUEST = "Plan a 2-day trip from Paris to Rome for 1 person";
