// The docs site as a reader meets it: `pnpm docs:build` builds it once, a static server serves the
// output, Chromium opens the home page, searches, follows the sidebar and the API reference link,
// and a crawl follows every internal link reachable from the home page (none may be broken).
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { chromiumMissing, collectPageErrors, launchChromium } from "../browser/chromium.js";
import { describeNeedingService } from "../fixtures/required-service.js";

const repoDir = fileURLToPath(new URL("../../", import.meta.url));
const docsDir = join(repoDir, "docs");
const distDir = join(docsDir, ".vitepress", "dist");

const describeInBrowser = describeNeedingService("test/docs-site", chromiumMissing());

/** Runs the root package.json's `docs:build` script as `pnpm docs:build` would, and resolves when it exits 0. */
async function buildSite(): Promise<void> {
  const script: string = JSON.parse(readFileSync(join(repoDir, "package.json"), "utf8")).scripts["docs:build"];
  const child = spawn("sh", ["-c", script], {
    cwd: repoDir,
    env: {
      ...process.env,
      PATH: `${join(repoDir, "node_modules", ".bin")}${process.platform === "win32" ? ";" : ":"}${process.env.PATH}`,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  const code = await new Promise<number | null>((done, fail) => {
    child.on("error", fail);
    child.on("exit", done);
  });
  if (code !== 0) throw new Error(`pnpm docs:build exited with ${code}:\n${output}`);
}

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".woff2": "font/woff2",
};

/** Serves `root` as a static host does: `/x/` is `/x/index.html`, `/x` may be `/x.html`, anything else a 404. */
async function serveStatic(root: string): Promise<{ origin: string; server: Server }> {
  const server = createServer((request, response) => {
    const pathname = decodeURIComponent(new URL(request.url ?? "/", "http://site").pathname);
    const wanted = resolve(root, `.${pathname}`);
    const candidates = [wanted, join(wanted, "index.html"), `${wanted}.html`];
    const file = wanted.startsWith(root) ? candidates.find((path) => existsSync(path) && statSync(path).isFile()) : undefined;
    if (!file) {
      response.writeHead(404, { "content-type": contentTypes[".html"] });
      response.end(readFileSync(join(root, "404.html")));
      return;
    }
    response.writeHead(200, { "content-type": contentTypes[extname(file)] ?? "application/octet-stream" });
    response.end(readFileSync(file));
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Undoes the entities a built page writes inside attribute values. */
function attributeText(value: string): string {
  return value
    .replace(/&amp;/g, "&")
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">");
}

/** The href of every `<a>` in a page's HTML. */
function linksOf(html: string): string[] {
  return [...html.matchAll(/<a\b[^>]*?\shref="([^"]*)"/g)].map((match) => attributeText(match[1] ?? ""));
}

/** Every id (and old-style anchor name) a fragment of the page can name. */
function anchorsOf(html: string): Set<string> {
  return new Set([...html.matchAll(/\s(?:id|name)="([^"]*)"/g)].map((match) => attributeText(match[1] ?? "")));
}

/** The URL path each Markdown page of docs/ is built to (README.md is the home page). */
function builtPagePaths(): string[] {
  const paths: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (name.startsWith(".") || name === "api" || name === "examples" || name === "node_modules") continue;
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".md")) {
        const page = relative(docsDir, path).split(sep).join("/");
        paths.push(page === "README.md" ? "/" : `/${page.replace(/\.md$/, ".html")}`);
      }
    }
  };
  walk(docsDir);
  return paths.sort();
}

describeInBrowser("the docs site (pnpm docs:build)", () => {
  let browser: Browser | undefined;
  let site: { origin: string; server: Server } | undefined;

  beforeAll(async () => {
    const started = Date.now();
    await buildSite();
    console.log(`test/docs-site: pnpm docs:build took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    site = await serveStatic(distDir);
    browser = await launchChromium();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((closed) => (site ? site.server.close(closed) : closed(undefined)));
  });

  async function openPage(path: string): Promise<{ page: Page; errors: string[] }> {
    if (!browser || !site) throw new Error("the site is built and served before the tests");
    const context = await browser.newContext();
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    await page.goto(`${site.origin}${path}`);
    return { page, errors };
  }

  it("opens on the documentation's index, with the quick starts first in the sidebar", async () => {
    const { page, errors } = await openPage("/");
    await expect(page.locator("main h1").first().textContent()).resolves.toContain("Portcullis documentation");
    const groups = await page.locator(".VPSidebar .VPSidebarItem.level-0 > .item h2").allTextContents();
    expect(groups.slice(0, 2)).toEqual(["Getting started", "Adapters: quick starts"]);
    await page.locator(".VPSidebar a", { hasText: "Express adapter" }).click();
    await page.waitForURL(/\/adapters\/express\.html$/);
    await page.locator("main h1", { hasText: "Express adapter" }).waitFor();
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("finds the passkey pages by searching, and opens one", async () => {
    const { page, errors } = await openPage("/");
    await page.locator("#local-search button").click();
    await page.locator(".VPLocalSearchBox input").fill("passkey");
    const results = page.locator(".VPLocalSearchBox .result");
    await results.first().waitFor();
    const first = results.first();
    const title = (await first.locator(".titles").textContent()) ?? "";
    expect(title.toLowerCase()).toContain("passkey");
    await first.click();
    await page.locator(".VPLocalSearchBox").waitFor({ state: "detached" });
    await page.waitForURL((url) => url.pathname !== "/");
    await page.locator("main h1").filter({ hasNotText: "Portcullis documentation" }).first().waitFor();
    await expect(page.locator("main .vp-doc").textContent()).resolves.toMatch(/passkey/i);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("links the TypeDoc API reference from the navigation bar", async () => {
    const { page, errors } = await openPage("/getting-started.html");
    await page.locator(".VPNavBar a", { hasText: "API reference" }).click();
    await page.waitForURL(/\/api\/index\.html$/);
    await expect(page.title()).resolves.toContain("Portcullis API reference");
    await page.locator("a", { hasText: "@portcullis/core" }).first().waitFor();
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("follows every internal link reachable from the home page: every page answers 200 and every #fragment exists", async () => {
    if (!site) throw new Error("the site is served before the tests");
    const origin = site.origin;
    const anchors = new Map<string, Set<string>>();
    const fragmentLinks: { from: string; to: string; fragment: string }[] = [];
    const broken: string[] = [];
    const seen = new Set<string>(["/"]);
    let frontier = ["/"];
    while (frontier.length > 0) {
      const next: string[] = [];
      for (let start = 0; start < frontier.length; start += 16) {
        await Promise.all(
          frontier.slice(start, start + 16).map(async (path) => {
            const response = await fetch(`${origin}${path}`);
            const html = await response.text();
            if (response.status !== 200 || /class="NotFound"|PAGE NOT FOUND/.test(html)) {
              broken.push(`${path}: ${response.status}`);
              return;
            }
            anchors.set(path, anchorsOf(html));
            for (const href of linksOf(html)) {
              if (href === "" || href.startsWith("javascript:") || href.startsWith("mailto:")) continue;
              const target = new URL(href, `${origin}${path}`);
              if (target.origin !== origin) continue;
              const fragment = decodeURIComponent(target.hash.slice(1));
              if (fragment !== "") fragmentLinks.push({ from: path, to: target.pathname, fragment });
              if (!seen.has(target.pathname)) {
                seen.add(target.pathname);
                next.push(target.pathname);
              }
            }
          }),
        );
      }
      frontier = next;
    }
    const missingFragments = fragmentLinks
      .filter(({ to, fragment }) => anchors.has(to) && !anchors.get(to)?.has(fragment))
      .map(({ from, to, fragment }) => `${from} -> ${to}#${fragment}`);
    console.log(
      `test/docs-site: checked ${anchors.size} pages (${[...anchors.keys()].filter((path) => path.startsWith("/api/")).length} of the API reference) and ${fragmentLinks.length} fragment links`,
    );
    expect(broken).toEqual([]);
    expect([...new Set(missingFragments)]).toEqual([]);
    expect(builtPagePaths().filter((path) => !anchors.has(path))).toEqual([]);
    expect([...anchors.keys()].filter((path) => path.startsWith("/api/")).length).toBeGreaterThan(100);
  });
});
