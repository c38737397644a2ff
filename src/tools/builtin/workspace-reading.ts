import { statSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import type { Span } from "../../planning/lexicon.js";
import { emptyInterpretation, type Interpretation, type RequestFacts } from "../types.js";

/**
 * The workspace toolkit's reading of a request (see Toolkit.interpret): which file and which folder it names, each
 * with the words it came from; paths that lead outside the workspace, refused before anything runs (the tools would
 * refuse them anyway, at the moment of use); and counting questions ("how many lines are in README.md"), which ask
 * for the tool that counts although they never say "count".
 */

const FILE = /(?:^|\s)["'`]?((?:\.{0,2}\/)?[\w.-]+(?:\/[\w.-]+)*\.[A-Za-z0-9]{1,8})["'`]?(?=[\s,.;:!?]|$)/;

/** The first file-looking word of a request (e.g. "README.md", "src/index.ts") with where it is. */
export function fileIn(text: string): Span | null {
  const m = FILE.exec(text);
  if (!m?.[1]) return null;
  const start = m.index + m[0].indexOf(m[1]);
  return { start, end: start + m[1].length, text: m[1] };
}

/** A folder as written: a relative or absolute path, "~/…", or "." and "..". */
const DIR = String.raw`["'\x60]?((?:~|\.{1,2})?\/?[\w.-]+(?:\/[\w.-]+)*\/?|\/|\.{1,2})["'\x60]?`;
/** The words for a folder, in the three languages. */
const FOLDER = String.raw`(?:folder|directory|dir|carpeta|directorio|dossier|r[ée]pertoire)`;
/** What a listing is of, in the three languages. */
const LISTED = String.raw`(?:files|entries|contents?|everything|archivos|ficheros|contenido|fichiers|contenu)`;
/** The words that lead to the folder a listing is of. */
const INTO = String.raw`(?:in|under|inside|within|of|from|en|de|del|dentro de|dans|du|sous)`;

/**
 * Where a request names the folder to list, most specific first: "the files in the folder src", "the src folder", "the folder test/unit", "files
 * in src", "what's in docs/", "ls ./examples", "archivos de la carpeta src", "fichiers du dossier src".
 */
const DIR_PATTERNS: readonly RegExp[] = [
  new RegExp(
    String.raw`(?<![\w])${LISTED}\s+${INTO}\s+(?:the\s+|la\s+|el\s+|le\s+)?${FOLDER}\s+(?:called\s+|named\s+)?${DIR}`,
    "i",
  ),
  new RegExp(String.raw`(?<![\w])${INTO}\s+(?:the\s+|la\s+|el\s+|le\s+|l')?${DIR}\s+${FOLDER}(?![\w])`, "i"),
  new RegExp(String.raw`(?<![\w])(?:the|a|la|el|le)\s+${DIR}\s+${FOLDER}(?![\w])`, "i"),
  new RegExp(String.raw`(?<![\w])(?:the\s+|a\s+|la\s+|el\s+|le\s+)?${FOLDER}\s+(?:called\s+|named\s+)?${DIR}`, "i"),
  new RegExp(String.raw`(?<![\w])${LISTED}\s+(?:(?:are|is)\s+)?${INTO}\s+(?:the\s+|la\s+|el\s+|le\s+)?${DIR}`, "i"),
  new RegExp(String.raw`(?<![\w])(?:what(?:'s|\s+is)|que\s+hay|qu'y\s+a-t-il)\s+${INTO}\s+(?:the\s+)?${DIR}`, "i"),
  new RegExp(String.raw`(?<![\w])(?:ls|list)\s+${DIR}\s*$`, "i"),
];

/** Words after "in"/"of" that are no folder's name ("files in this folder", "in the current directory"). */
const NOT_A_DIR = new Set(
  (
    "the this that these my our your it its here there current same a an one which what workspace project repo " +
    "repository all some any and or la el le les ce cette este esta mi mis mon ma mes " +
    // Verbs that follow "the folder" ("the src folder contain", "the folder has"): no folder's name either.
    "contain contains have has hold holds is are does do include includes tiene contiene contient"
  ).split(" "),
);

/** The workspace itself, in words: listed as ".". */
const HERE =
  /(?<![\w])(?:this|the current|the same|the working|the project(?:'s)?|the workspace(?:'s)?|the root)\s+(?:folder|directory|dir|workspace|project)|(?<![\w])(?:here|the workspace|the project root)(?![\w])/i;

/** The folder a request asks to list, with where it is; null when it names none. */
function dirIn(text: string): Span | null {
  return listingIn(text)?.dir ?? null;
}

/** The folder a request asks to list and the words that ask for the listing ("the files in src"). */
function listingIn(text: string): { dir: Span; phrase: Span } | null {
  for (const re of DIR_PATTERNS) {
    const m = re.exec(text);
    const dir = m?.[1];
    if (!m || !dir || NOT_A_DIR.has(dir.toLowerCase()) || FOLDER_WORD.test(dir) || LISTED_WORD.test(dir)) continue;
    const start = m.index + m[0].lastIndexOf(dir);
    const end = m.index + m[0].length;
    return {
      dir: { start, end: start + dir.length, text: dir },
      phrase: { start: m.index, end, text: text.slice(m.index, end) },
    };
  }
  return null;
}

const FOLDER_WORD = new RegExp(`^${FOLDER}$`, "i");
const LISTED_WORD = new RegExp(`^${LISTED}$`, "i");

/** A folder as the tool takes it: "src/" is "src"; the root "/" stays. */
export function dirParam(text: string): string {
  return text.length > 1 ? text.replace(/\/+$/, "") : text;
}

/** Why a path cannot be used in the workspace at `root`, or null when it lies inside it (as text). */
function outsideWorkspace(root: string, path: string): string | null {
  if (path.startsWith("~"))
    return `"${path}" is in your home folder, outside the workspace ${root}: the tools only read inside it; name a path inside it`;
  const rel = relative(root, resolve(root, path));
  if (rel === "" || (!rel.startsWith("..") && !isAbsolute(rel))) return null;
  return `"${path}" leads outside the workspace ${root}: the tools only read inside it; name a path inside it`;
}

/** What a count is of: text units (counted by text_stats) or folder entries (counted by listing the folder). */
const TEXT_UNITS = String.raw`(?:lines?|words?|characters?|chars|l[ií]neas?|palabras?|caracteres?|lignes?|mots?|caract[eè]res?)`;
const ENTRY_UNITS = String.raw`(?:files|entries|folders|directories|subfolders|archivos|ficheros|carpetas|fichiers|dossiers)`;
/** "how many", "the number of", "cuántas", "combien de", "nombre de": a question that asks for a count. */
const HOW_MANY = String.raw`(?:how\s+many|(?:the\s+)?(?:number|count|total)\s+of|cu[aá]nt[oa]s|(?:el\s+)?(?:n[uú]mero|cantidad)\s+de|combien\s+(?:de\s+|d')?|(?:le\s+)?nombre\s+(?:de\s+|d'))`;

/** "count", "contar", "compter" and their forms, leading to what is counted ("count the files in src"). */
const COUNT_VERB = String.raw`(?:count(?:ing)?|cuenta|contar|compte|compter)\s+(?:the\s+|all\s+|los\s+|las\s+|les\s+)?`;

function countQuestion(units: string): RegExp {
  // "how many lines", "how many blank lines", "line count", "count the files".
  return new RegExp(
    String.raw`(?<![\w])(?:${HOW_MANY}\s*(?:[\w'-]+\s+){0,2}?${units}|${COUNT_VERB}${units}|${units}\s+counts?)(?![\w])`,
    "i",
  );
}

const TEXT_COUNT = countQuestion(TEXT_UNITS);
const ENTRY_COUNT = countQuestion(ENTRY_UNITS);

/**
 * Words that ask what a file or folder is or does, to explain it or to compare it, in the languages the reader knows:
 * "what does X do", "what is X for", "explain X", "describe", "tell me about", "walk me through", "how does X work",
 * "compare", "the difference between"; "qué hace", "explica", "para qué sirve", "compara"; "que fait", "explique",
 * "à quoi sert", "compare"; "was macht", "erkläre", "wofür", "vergleiche"; "cosa fa", "spiega", "confronta"; "o que
 * faz", "explique", "compare".
 */
const EXPLAIN =
  /(?<![\p{L}])(?:what(?:'s| is| are| does| do)|how (?:does|do)|explain|describe|tell me about|walk me through|purpose of|compare|comparing|difference(?:s)? between|diff(?:erence)? of|qu[eé] (?:hace|es|hay)|para qu[eé] sirve|expl[ií]ca(?:me)?|describe|compara(?:r)?|diferencias? entre|que fait|qu'est-ce que|[aà] quoi sert|expliquez?|d[ée]cri(?:s|vez)|comparez?|diff[ée]rences? entre|was (?:macht|ist|tut)|wof[üu]r|erkl[äa]r(?:e|en)?|beschreibe|vergleiche|unterschied zwischen|cosa (?:fa|[eè])|a cosa serve|spiega(?:mi)?|descrivi|confronta|differenza tra|o que (?:faz|[eé])|para que serve|explique|descreva|diferen[çc]a entre)(?![\p{L}])/iu;

/** What a question asks of a file after naming it ("what does X export"): what an outline of X answers. */
const WHAT_IT_DOES =
  /^\s*(?:do|does|export|exports|define|defines|contain|contains|say|says|mean|means|include|includes|implement|implements|provide|provides)(?![\p{L}])/iu;

/** Every file-looking word of a request, in order. */
function filesIn(text: string): Span[] {
  const out: Span[] = [];
  const re = new RegExp(FILE.source, "g");
  for (const m of text.matchAll(re)) {
    if (!m[1]) continue;
    const start = m.index + m[0].indexOf(m[1]);
    out.push({ start, end: start + m[1].length, text: m[1] });
  }
  return out;
}

/** Whether a path inside the workspace names an existing file (`file`) or folder (`dir`); null when neither. */
function existing(root: string, path: string): "file" | "dir" | null {
  if (outsideWorkspace(root, path) !== null) return null;
  try {
    const st = statSync(resolve(root, path));
    return st.isDirectory() ? "dir" : st.isFile() ? "file" : null;
  } catch {
    // No such path (or it cannot be looked at): the request names nothing to explain, and the tools say why at use.
    return null;
  }
}

/**
 * A request that asks what existing files or a folder are or do, or to compare them: read each file (one read step
 * per file) and summarize what was read; list a folder. Null when it asks no such thing or names nothing that exists.
 */
function explainAsk(facts: RequestFacts, root: string, out: Interpretation): void {
  const cue = EXPLAIN.exec(facts.text);
  if (!cue) return;
  // A file that is not there, or outside the workspace, is still planned: the read names it (or the record refuses
  // it before anything runs), which says more than "no tool matches".
  const named = filesIn(facts.text).filter((f) => existing(root, f.text) !== "dir");
  const folder = named.length === 0 ? folderNamed(facts.text, root) : null;
  const span = spanAt(facts.text, cue);
  if (named.length > 0) {
    // "what does X export / define / contain": the verb after the file asks what the outline of X says.
    const last = named.at(-1)!;
    const verb = WHAT_IT_DOES.exec(facts.text.slice(last.end));
    const tail = verb
      ? [
          {
            span: spanAt(facts.text, { ...verb, index: last.end + verb.index }),
            tools: ["read_file", "summarize_text"],
          },
        ]
      : [];
    out.asks = [...(out.asks ?? []), { span, tools: ["read_file", "summarize_text"] }, ...tail];
    for (const f of named.slice(1)) out.values.push({ name: "path", value: f.text, source: f, tools: ["read_file"] });
    if (named.length > 1)
      out.instances = {
        ...out.instances,
        text: named.map((f, i) => ({ key: String(i + 1), params: { path: f.text } })),
      };
  } else if (folder) {
    out.asks = [...(out.asks ?? []), { span, tools: ["list_files"] }];
    out.values.push({ name: "dir", value: dirParam(folder.text), source: folder, tools: ["list_files"] });
  }
}

/** The first word of a request that is an existing folder of the workspace ("docs", "src/cli"), or null. */
function folderNamed(text: string, root: string): Span | null {
  for (const m of text.matchAll(/[^\s"'`()]+/g)) {
    const word = m[0].replace(/[,.;:!?]+$/, "");
    if (word.length > 1 && /\w/.test(word) && existing(root, word) === "dir")
      return { start: m.index, end: m.index + word.length, text: word };
  }
  return null;
}

/**
 * The folder a request asks to list: named after listing words ("the files in src"), or asked about ("what does the
 * docs folder do", "explain src/cli") when it exists in the workspace at `root`. Null when it names none.
 */
export function folderAsked(text: string, root: string): Span | null {
  const listed = dirIn(text);
  if (listed) return listed;
  if (!EXPLAIN.test(text) || filesIn(text).some((f) => existing(root, f.text) !== "dir")) return null;
  return folderNamed(text, root);
}

/** The workspace toolkit's reading: see the module comment. `root` is the workspace the tools are confined to. */
export function readWorkspaceRequest(facts: RequestFacts, root: string): Interpretation {
  const out = emptyInterpretation();
  const file = fileIn(facts.text);
  const listing = listingIn(facts.text);
  const dir = listing?.dir ?? null;
  if (file) {
    const why = outsideWorkspace(root, file.text);
    if (why) out.refusals.push({ name: "path", text: file.text, why, tools: ["read_file"] });
    else out.values.push({ name: "path", value: file.text, source: file, tools: ["read_file"] });
  }
  if (dir && !(file && dir.start < file.end && file.start < dir.end)) {
    const why = outsideWorkspace(root, dir.text);
    if (why) {
      out.refusals.push({ name: "dir", text: dir.text, why, tools: ["list_files"] });
      out.consumed.push(dir);
    } else out.values.push({ name: "dir", value: dirParam(dir.text), source: dir, tools: ["list_files"] });
    // The words that named the folder ask for its listing, in any of the three languages ("los archivos de la
    // carpeta src", "what's in /etc").
    out.asks = [{ span: listing!.phrase, tools: ["list_files"] }];
  }
  const text = TEXT_COUNT.exec(facts.text);
  if (text) out.asks = [...(out.asks ?? []), { span: spanAt(facts.text, text), tools: ["text_stats"] }];
  const entries = ENTRY_COUNT.exec(facts.text);
  if (entries && (dir || HERE.test(facts.text)))
    out.asks = [...(out.asks ?? []), { span: spanAt(facts.text, entries), tools: ["list_files"] }];
  const here = HERE.exec(facts.text);
  if (here && !dir) out.consumed.push(spanAt(facts.text, here));
  const titled = reportTitleIn(facts.text);
  if (titled) out.values.push({ name: "title", value: titled.title, source: titled.source, tools: ["write_report"] });
  // What another ask reads already ("what's the word count of X" counts): asking what X is adds nothing to it.
  if (!dir && (out.asks ?? []).length === 0) explainAsk(facts, root, out);
  return out;
}

/** "titled X", "called X", "named X" (and their French, Spanish, Italian and German forms), or X quoted after them. */
const REPORT_TITLE =
  /\b(?:titled|entitled|called|named|intitul[ée]e?|titulad[oa]|llamad[oa]|intitolat[oa]|betitelt|mit dem titel)\s+(?:"([^"]+)"|'([^']+)'|“([^”]+)”|«\s*([^»]+?)\s*»|([^,.;:!?\n"]+))/iu;

/**
 * The title a request gives its report, with the words it came from: quoted, or the words after "titled",
 * "called", "named" … up to the end of the clause. Null when it gives none.
 */
export function reportTitleIn(text: string): { title: string; source: Span } | null {
  const m = REPORT_TITLE.exec(text);
  const title = m
    ?.slice(1)
    .find((g) => g !== undefined)
    ?.trim();
  return m && title ? { title: title.slice(0, 120), source: spanAt(text, m) } : null;
}

function spanAt(text: string, m: RegExpExecArray): Span {
  return { start: m.index, end: m.index + m[0].length, text: text.slice(m.index, m.index + m[0].length) };
}
