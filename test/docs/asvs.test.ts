// docs/asvs.md traces every requirement of ASVS 5.0.0's V6, V7, V9 and V10 to a status and, where
// Portcullis meets it, to the tests that show it. This file reads the page's tables and fails when a
// row names a test that is not there, when a requirement is missing or doubled, when a status is
// not one the page defines, and when a link goes nowhere. Whether a named test proves its
// requirement is the review of the page, not of this file.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const pagePath = "docs/asvs.md";

/**
 * The requirements of ASVS 5.0.0 (tag v5.0.0_release, 5.0/en/0x15, 0x16, 0x18, 0x19) by section:
 * the level of x.y.1, x.y.2, … in order. "6.1": "122" is 6.1.1 at Level 1, 6.1.2 and 6.1.3 at Level 2.
 */
const asvsLevels: Record<string, string> = {
  "6.1": "122",
  "6.2": "111111112222",
  "6.3": "11223333",
  "6.4": "112233",
  "6.5": "22222333",
  "6.6": "2223",
  "6.7": "33",
  "6.8": "2222",
  "7.1": "222",
  "7.2": "1111",
  "7.3": "22",
  "7.4": "11222",
  "7.5": "223",
  "7.6": "22",
  "9.1": "111",
  "9.2": "1222",
  "10.1": "22",
  "10.2": "223",
  "10.3": "22223",
  "10.4": "1111122222233333",
  "10.5": "22222",
  "10.6": "22",
  "10.7": "222",
};

/** Every requirement ID of the four chapters, with its level ("L1", "L2", "L3"). */
const requirements = new Map<string, string>(
  Object.entries(asvsLevels).flatMap(([section, levels]) =>
    [...levels].map((level, index): [string, string] => [`${section}.${index + 1}`, `L${level}`]),
  ),
);

const statuses = ["Met", "Host", "N/A", "Partial", "Not claimed"];

interface NamedTest {
  file: string;
  text: string;
}

interface Row {
  /** Where the row is: "docs/asvs.md:57 (6.2.1)", for the messages. */
  where: string;
  id: string;
  level: string;
  status: string;
  /** The section heading the row is under, "6.2" for "### V6.2 …". */
  section: string | undefined;
  tests: NamedTest[];
  links: string[];
}

/** The targets of the Markdown links in `text` that are not absolute URLs or anchors of this page. */
function relativeLinks(text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] as string)
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target) && !target.startsWith("#"));
}

/** The requirement rows of the page's tables, with the section each is under. */
function readRows(markdown: string): Row[] {
  const rows: Row[] = [];
  let section: string | undefined;
  markdown.split("\n").forEach((line, index) => {
    const heading = /^### V(\d+\.\d+) /.exec(line);
    if (heading) section = heading[1];
    if (/^## /.test(line)) section = undefined;
    const row = /^\| (\d+\.\d+\.\d+) +\|(.*)\|$/.exec(line);
    if (!row) return;
    const id = row[1] as string;
    const cells = (row[2] as string).split("|").map((cell) => cell.trim());
    const [level = "", , statusCell = "", proof = ""] = cells;
    rows.push({
      where: `${pagePath}:${index + 1} (${id})`,
      id,
      level,
      status: /^\*\*(.+)\*\*$/.exec(statusCell)?.[1] ?? statusCell,
      section,
      tests: [...proof.matchAll(/`([^`\s]+\.ts)`: "([^"]+)"/g)].map((match) => ({
        file: match[1] as string,
        text: match[2] as string,
      })),
      links: relativeLinks(line),
    });
  });
  return rows;
}

/**
 * The tests of a source file, named as they are written there: the string, or template, that opens
 * each `it(…)`, `test(…)`, `it.each(…)(…)` call, in any of the three quotes, escapes read, `${…}`
 * kept as written; `skipped` for `.skip` and `.todo`, which prove nothing.
 */
function testsIn(source: string): { title: string; skipped: boolean }[] {
  const tests: { title: string; skipped: boolean }[] = [];
  const call = /(?<![\w.$])(?:it|test)((?:\.(?:each|only|skip|concurrent|sequential|fails|todo))*)(?:\([^()]*\))?\(\s*(["'`])/g;
  for (const match of source.matchAll(call)) {
    const quote = match[2] as string;
    let title = "";
    for (let at = (match.index ?? 0) + match[0].length; at < source.length; at += 1) {
      const character = source[at] as string;
      if (character === quote) {
        tests.push({ title, skipped: /\.(?:skip|todo)\b/.test(match[1] as string) });
        break;
      }
      if (character === "\\") {
        at += 1;
        title += source[at] ?? "";
      } else {
        title += character;
      }
    }
  }
  return tests;
}

/** The anchors GitHub gives the headings of a Markdown page. */
function headingAnchors(markdown: string): Set<string> {
  return new Set(
    [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((match) =>
      (match[1] as string)
        .trim()
        .toLowerCase()
        .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
        .replace(/[^\p{L}\p{N}\s_-]/gu, "")
        .replace(/\s/g, "-"),
    ),
  );
}

const page = readFileSync(join(root, pagePath), "utf8");
const rows = readRows(page);
const sources = new Map<string, string | undefined>();

/** A file of the repository, read once; undefined when there is none. */
function source(file: string): string | undefined {
  if (!sources.has(file)) {
    const path = join(root, file);
    sources.set(file, existsSync(path) ? readFileSync(path, "utf8") : undefined);
  }
  return sources.get(file);
}

describe("testsIn", () => {
  it("reads the names of it, test and it.each calls in double quotes, single quotes and backticks, as written", () => {
    const code = [
      'it("PW-3: a \\"quoted\\" word", () => {});',
      "test('RL-1: it\\'s counted', async () => {});",
      "it.each(table)(`STUP-5: \u0024{name} is read`, (name) => {});",
      'it.skip("RT-2: not run", () => {}); describe("not a test", () => {}); /x/.test("not a call");',
    ].join("\n");
    expect(testsIn(code)).toEqual([
      { title: 'PW-3: a "quoted" word', skipped: false },
      { title: "RL-1: it's counted", skipped: false },
      { title: "STUP-5: \u0024{name} is read", skipped: false },
      { title: "RT-2: not run", skipped: true },
    ]);
  });
});

describe("docs/asvs.md", () => {
  it("has a table row for every requirement it traces", () => {
    expect(rows.length).toBe(requirements.size);
  });

  it("every test docs/asvs.md names exists, in the file it names", () => {
    const problems: string[] = [];
    for (const row of rows) {
      for (const { file, text } of row.tests) {
        const code = source(normalize(file));
        if (code === undefined) {
          problems.push(`${row.where}: ${file} does not exist`);
          continue;
        }
        const named = testsIn(code).filter((test) => test.title.startsWith(text));
        const [test] = named;
        if (test === undefined || named.length > 1) {
          const titles = named.map((other) => other.title).join(" / ");
          problems.push(
            `${row.where}: ${file} has ${named.length} tests whose name starts with "${text}"${titles && `: ${titles}`}`,
          );
          continue;
        }
        if (test.skipped) problems.push(`${row.where}: ${file}'s test "${test.title}" is skipped`);
        // "STUP-4, ASVS 6.3.3: …" is a label many tests share: the text must name more than it.
        const label = /^[^:]{1,60}: /.exec(test.title)?.[0] ?? "";
        if (text.length <= label.length)
          problems.push(`${row.where}: "${text}" is only the label of ${file}'s test "${test.title}"`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("lists every requirement of V6, V7, V9 and V10 of ASVS 5.0.0 once, at its level, under its section", () => {
    const ids = rows.map((row) => row.id);
    expect(
      ids.filter((id, index) => ids.indexOf(id) !== index),
      "IDs listed twice",
    ).toEqual([]);
    expect(
      [...requirements.keys()].filter((id) => !ids.includes(id)),
      "requirements missing from the page",
    ).toEqual([]);
    const problems: string[] = [];
    for (const row of rows) {
      const level = requirements.get(row.id);
      if (level === undefined) problems.push(`${row.where}: no such requirement in ASVS 5.0.0's V6, V7, V9, V10`);
      else if (row.level !== level) problems.push(`${row.where}: level ${row.level}, ASVS 5.0.0 says ${level}`);
      if (row.section === undefined || !row.id.startsWith(`${row.section}.`)) {
        problems.push(`${row.where}: under section ${row.section ?? "(none)"}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("gives every requirement one of the five statuses, Not claimed only at Level 3", () => {
    const problems: string[] = [];
    for (const row of rows) {
      if (!statuses.includes(row.status)) problems.push(`${row.where}: status "${row.status}"`);
      if (row.status === "Not claimed" && row.level !== "L3") problems.push(`${row.where}: Not claimed at ${row.level}`);
    }
    expect(problems).toEqual([]);
  });

  it("names at least one test for every Met row", () => {
    expect(rows.filter((row) => row.status === "Met" && row.tests.length === 0).map((row) => row.where)).toEqual([]);
  });

  it("links every Host row to a docs page, and every link of the page to a file and heading that exist", () => {
    const problems: string[] = [];
    for (const row of rows) {
      if (row.status === "Host" && !row.links.some((link) => /^[^#]+\.md(#|$)/.test(link))) {
        problems.push(`${row.where}: a Host row without a link to the page that says what the host does`);
      }
    }
    for (const link of relativeLinks(page)) {
      const [file = "", anchor] = link.split("#");
      const target = normalize(join(dirname(pagePath), file));
      const text = source(target);
      if (text === undefined) problems.push(`${pagePath}: the link ${link} goes to ${target}, which does not exist`);
      else if (anchor !== undefined && !headingAnchors(text).has(anchor)) {
        problems.push(`${pagePath}: the link ${link}: ${target} has no heading #${anchor}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
