// The docs site (pnpm docs:build, pnpm docs:preview): the Markdown of docs/ as VitePress pages, with
// local search, and TypeDoc's HTML API reference copied under /api/ after the build.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type DefaultTheme, defineConfig } from "vitepress";

const docsDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const repoDir = resolve(docsDir, "..");

/**
 * Where links to files that are not pages (sources, tests, examples) point: the repository's
 * files on GitHub. `DOCS_SOURCE_URL` names another place (a fork, a tag).
 */
const sourceUrl = (process.env.DOCS_SOURCE_URL ?? "https://github.com/portcullis/portcullis/blob/main").replace(/\/$/, "");

/**
 * The pages of one folder of docs/: those named in `first` in that order (as docs/README.md lists
 * them), then any others in file name order, each titled by its first heading.
 */
function pagesIn(folder: string, first: string[] = []): DefaultTheme.SidebarItem[] {
  const rest = readdirSync(join(docsDir, folder))
    .filter((name) => name.endsWith(".md"))
    .map((name) => name.replace(/\.md$/, ""))
    .filter((name) => !first.includes(name))
    .sort();
  return [...first, ...rest].map((name) => ({ text: titleOf(join(folder, `${name}.md`)), link: `/${folder}/${name}` }));
}

/** A page's first heading, without code marks. */
function titleOf(page: string): string {
  const heading = readFileSync(join(docsDir, page), "utf8").match(/^# (.+)$/m);
  return heading?.[1]?.replace(/`/g, "") ?? page;
}

/** Top-level pages by name, in the order the sidebar lists them. */
function pages(...names: string[]): DefaultTheme.SidebarItem[] {
  return names.map((name) => ({ text: titleOf(`${name}.md`), link: `/${name}` }));
}

/**
 * A link from a page to a file that is not a page of docs/ (`../packages/…`, `examples/…`): the file's
 * place under {@link sourceUrl}. The build fails when the file does not exist, so such links
 * cannot break either.
 */
function sourceLink(href: string, fromPage: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:|^[#/]/i.test(href)) return undefined;
  const [path = "", fragment] = href.split("#", 2);
  if (path === "") return undefined;
  const target = resolve(docsDir, dirname(fromPage), decodeURIComponent(path));
  if (/\.md$/.test(path) && !relative(docsDir, target).startsWith("..")) return undefined;
  if (!existsSync(target))
    throw new Error(`${fromPage}: the link ${href} names ${relative(repoDir, target)}, which does not exist`);
  return `${sourceUrl}/${relative(repoDir, target).split("\\").join("/")}${fragment === undefined ? "" : `#${fragment}`}`;
}

/**
 * A heading's id as GitHub makes it, which the pages' `#fragment` links were written against:
 * lower case, punctuation dropped, each space a hyphen (VitePress's own slugs collapse hyphens).
 */
function githubSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

export default defineConfig({
  title: "Portcullis",
  description: "An embeddable authentication library for Node.js services",
  srcExclude: ["api/**", "examples/**"],
  rewrites: { "README.md": "index.md" },
  cleanUrls: false,
  // The local search index (about 850 kB) is one chunk, loaded when the search box opens.
  vite: { build: { chunkSizeWarningLimit: 1500 } },
  markdown: {
    anchor: { slugify: githubSlug },
    config(md) {
      const renderLink = md.renderer.rules.link_open;
      md.renderer.rules.link_open = (tokens, index, options, env, self) => {
        const token = tokens[index];
        const href = token?.attrGet("href");
        const rewritten = href && token ? sourceLink(href, env.relativePath) : undefined;
        if (token && rewritten) token.attrSet("href", rewritten);
        return renderLink ? renderLink(tokens, index, options, env, self) : self.renderToken(tokens, index, options);
      };
    },
  },
  themeConfig: {
    search: { provider: "local" },
    nav: [
      { text: "Getting started", link: "/getting-started" },
      { text: "HTTP API", link: "/http-api" },
      { text: "API reference", link: "/api/index.html", target: "_self" },
    ],
    sidebar: [
      { text: "Getting started", items: [{ text: "Overview", link: "/" }, ...pages("getting-started")] },
      { text: "Adapters: quick starts", items: pagesIn("adapters", ["express", "hono", "fastify", "nestjs"]) },
      {
        text: "Flows",
        collapsed: false,
        items: pagesIn("flows", [
          "login",
          "totp",
          "tokens",
          "cookie-mode",
          "passkeys",
          "oauth",
          "directory",
          "email",
          "passwordless",
          "account",
          "user-fields",
          "step-up",
          "organizations",
          "api-keys",
          "service-accounts",
          "impersonation",
        ]),
      },
      {
        text: "Operations",
        items: pages(
          "deployment",
          "configuration",
          "storage",
          "existing-users-table",
          "redis",
          "revocation-channel",
          "throttling",
          "observability",
          "events",
          "migrating",
          "importing",
          "node-versions",
          "benchmarks",
        ),
      },
      {
        text: "Security",
        items: pages("security", "host-duties", "sign-in-pathways", "asvs", "l2-profile"),
      },
      {
        text: "Reference",
        items: [
          ...pages("http-api", "errors", "client", "compatibility", "openapi", "testing-kit", "testing", "docs-site"),
          { text: "API reference (TypeDoc)", link: "/api/index.html", target: "_self" },
        ],
      },
    ],
  },
});
