// @ts-check
// Lint with types: the rules that matter here (floating promises, promises passed where a callback's result is
// ignored, awaiting non-promises, throwing or rejecting with non-errors) need the type checker. `npm run lint`.
import js from "@eslint/js";
import { defineConfig, globalIgnores } from "eslint/config";
import tseslint from "typescript-eslint";

// Travel words, whole or as a part of a compound name ("search_flights", "hotelId", "inFlight", "TRIP"), not
// inside another word ("strip").
const LOWER = "flights?|hotels?|trips?|itinerar(?:y|ies)|bookings?|airlines?|travell?ers?|activities|airports?";
const CAPITAL = "Flights?|Hotels?|Trips?|Itinerar(?:y|ies)|Bookings?|Airlines?|Travell?ers?|Activities|Airports?";
const DOMAIN_WORD = `(?:^|[^A-Za-z])(?:${LOWER})(?![a-z])|(?:${CAPITAL})(?![a-z])|(?:^|[^A-Za-z])(?:${LOWER.toUpperCase()})(?![A-Za-z])`;
const DOMAIN_WORD_SELECTORS = [
  `Literal[value=/${DOMAIN_WORD}/]`,
  `Literal[regex.pattern=/${DOMAIN_WORD}/]`,
  `TemplateElement[value.raw=/${DOMAIN_WORD}/]`,
  `Identifier[name=/${DOMAIN_WORD}/]`,
];
const DOMAIN_WORD_WHY =
  "The core is domain-free (issue 22 item 8): travel words belong in examples/travel and the app layer (src/app/); " +
  "use a neutral example (a file, a report) or take the word from a toolkit.";

export default defineConfig(
  globalIgnores(["node_modules/", ".candor/", ".langgraph_api/", "coverage/", "dist/"]),
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // An `async` function with no `await` is how this code implements a Promise-returning interface (a
      // reasoner, a tool's run, a graph node): `async` turns a synchronous throw into a rejection the caller
      // handles. The rule would push toward dropping `async`, which turns that rejection back into a throw.
      "@typescript-eslint/require-await": "off",
      // `_name` marks a parameter an interface requires but this implementation does not read.
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          caughtErrorsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
          ignoreRestSiblings: true,
        },
      ],
      // `return promise` inside try/catch skips the catch when the promise rejects: always await there.
      "@typescript-eslint/return-await": ["error", "error-handling-correctness-only"],
      // Reject with an Error (an abort's reason goes through `abortReason`); passing on a rejection unchanged,
      // typed `unknown`, is allowed, as rethrowing in a catch clause is.
      "@typescript-eslint/prefer-promise-reject-errors": ["error", { allowThrowingUnknown: true }],
      // A `.catch((e) => …)` callback gets whatever was thrown: treat it as `unknown`, as a catch clause does.
      "@typescript-eslint/use-unknown-in-catch-callback-variable": "error",
      // A switch over a union handles every member or says `default`: adding a member then fails here.
      "@typescript-eslint/switch-exhaustiveness-check": [
        "error",
        { considerDefaultExhaustiveForUnions: true, requireDefaultForNonUnion: false },
      ],
      // Deprecated APIs (zod 4 renamed several) are removed in the next major: move off them as they appear.
      "@typescript-eslint/no-deprecated": "error",
      eqeqeq: ["error", "smart"],
    },
  },
  {
    // A node is a thin adapter (DESIGN.md "Target structure"): read state, call one function of src/, return an
    // update. Every function in nodes/ stays within 60 lines.
    files: ["nodes/**/*.ts"],
    rules: {
      "max-lines-per-function": ["error", { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // The core is domain-free (DESIGN.md "Target structure", issue 22 item 8): no travel word in the code of src/,
    // nodes/, graphs/ or prompts/. The travel demo's words live in examples/travel, and the app layer (src/app/,
    // the demo command) assembles it; an example in a message or prompt uses a neutral domain (files, reports).
    files: ["src/**/*.ts", "nodes/**/*.ts", "graphs/**/*.ts", "prompts/**/*.ts"],
    ignores: ["src/app/**", "src/cli/commands/demo.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        ...DOMAIN_WORD_SELECTORS.map((selector) => ({ selector, message: DOMAIN_WORD_WHY })),
      ],
    },
  },
  {
    // Tests read JSON printed by the CLI and check it with `expect`, which fails loudly on a wrong shape; typing
    // every such read would add casts, not safety. Source code parses untrusted input with zod instead.
    files: ["test/**/*.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
