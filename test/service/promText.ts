/** One sample of the Prometheus text format. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromFamily {
  name: string;
  type: string;
  help: string;
  samples: PromSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/y;
/**
 * A number as Prometheus reads it (Go's `strconv.ParseFloat`: NaN in any case). prom-client writes
 * `Nan` for the event-loop lag's mean before its first sample (a scrape right after the start).
 */
const VALUE = /^(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[Nn][Aa][Nn]|[+-]Inf)$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
const SUFFIXES: Record<string, readonly string[]> = {
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["_sum", "_count"],
};

/**
 * A strict reader of the text exposition format 0.0.4, written for the tests so that what
 * prom-client writes is read by something else: every line is a `# HELP`, a `# TYPE` (before its
 * samples, once), a comment, or a sample of a declared family with well-formed labels and a
 * number; a histogram's buckets carry `le`; no sample is repeated. Throws naming the line.
 */
export function parsePromText(text: string): Map<string, PromFamily> {
  if (!text.endsWith("\n")) throw new Error("the exposition does not end with a line feed");
  const families = new Map<string, PromFamily>();
  const seen = new Set<string>();
  const lines = text.slice(0, -1).split("\n");
  lines.forEach((line, index) => {
    const fail = (why: string): never => {
      throw new Error(`line ${index + 1} (${line}): ${why}`);
    };
    if (line === "") return;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, keyword, name = "", rest = ""] = meta;
      if (!NAME.test(name)) fail("bad metric name");
      const family = families.get(name) ?? { name, type: "untyped", help: "", samples: [] };
      if (keyword === "TYPE") {
        if (!TYPES.has(rest)) fail("unknown type");
        if (family.samples.length > 0) fail("TYPE after the family's samples");
        family.type = rest;
      } else {
        family.help = rest;
      }
      families.set(name, family);
      return;
    }
    if (line.startsWith("#")) return;
    const match = SAMPLE.exec(line) ?? fail("not a sample");
    const [, name = "", labelText = "", value = ""] = match;
    if (!VALUE.test(value)) fail("the value is not a number");
    const labels: Record<string, string> = {};
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < labelText.length) {
      const label = LABEL.exec(labelText) ?? fail("bad labels");
      const [, key = "", raw = ""] = label;
      if (key in labels) fail(`label ${key} twice`);
      labels[key] = raw.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    const family =
      families.get(name) ??
      [...families.values()].find((f) =>
        (SUFFIXES[f.type] ?? []).some((suffix) => name === f.name + suffix),
      ) ??
      fail("a sample of no declared family");
    if (name.endsWith("_bucket") && family.type === "histogram" && !("le" in labels)) {
      fail("a bucket without le");
    }
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) fail("the same sample twice");
    seen.add(key);
    family.samples.push({ name, labels, value: Number(value.replace("Inf", "Infinity")) });
  });
  return families;
}
