import type { Auth } from "../auth.js";
import { writeOperatorLine } from "../diagnostics/operator-lines.js";
import { normalizePath } from "./handle-request.js";
import { routes } from "./routes/index.js";

/** True for what `createAuth` returns (checked by shape, so two copies of core still agree). */
function isAuthInstance(value: unknown): value is Auth {
  const candidate = value as Partial<Record<keyof Auth, unknown>> | null | undefined;
  return (
    typeof candidate?.config === "object" &&
    typeof candidate.storage === "object" &&
    typeof candidate.emit === "function" &&
    typeof candidate.keys === "object"
  );
}

/** What a value passed instead of an auth instance looks like, for the message. */
function described(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (typeof value !== "object") return `a ${typeof value}`;
  const shape = value as { method?: unknown; req?: unknown };
  if (typeof shape.method === "string" || typeof shape.req === "object") {
    return "a request, so the function itself was mounted without being called";
  }
  if ("issuer" in value && "secrets" in value) return "a configuration; pass it to createAuth() first";
  return "an object";
}

/**
 * Checks, where an adapter's function is called (at mount time), that it was given the auth
 * instance, and throws a `TypeError` saying what to write: `app.use(authRouter)` without the
 * call hands the function a request, `requireAuth()` hands it nothing.
 *
 * @param call what the adapter's user should write, such as `"app.use(authRouter(auth))"`.
 */
export function assertAuthArgument(value: unknown, name: string, call: string): asserts value is Auth {
  if (isAuthInstance(value)) return;
  throw new TypeError(`${name} needs the auth instance createAuth() returns, and got ${described(value)}. Write ${call}`);
}

const routeSegments = routes
  .filter((route) => !route.atRoot && route.path.startsWith("/auth/"))
  .map((route) => route.path.split("/").slice(1));

/**
 * The base path under which `path` would name one of the routes, or undefined when it names none.
 * A path shorter than a route needs no test of its own: the route's first segment, `auth` (never a
 * parameter), is compared with one before the path's first, which is undefined.
 */
function basePathNaming(path: string): string | undefined {
  const segments = path.split("/").slice(1);
  for (const expected of routeSegments) {
    const start = segments.length - expected.length;
    const matches = expected.every((segment, index) => segment.startsWith(":") || segment === segments[start + index]);
    if (matches) return start === 0 ? "" : `/${segments.slice(0, start).join("/")}`;
  }
  return undefined;
}

const explained = new WeakSet<Auth>();

/**
 * For an adapter mounted under a path (`app.use("/api", authRouter(auth))`), which matches its
 * routes against the path below the mount point: when a request it does not serve would name a
 * route under another base path, explains once on stderr how to mount it or which
 * `http.basePath` to set. Nothing is said when the request names no route at all.
 */
export function explainMountPath(auth: Auth, mountPath: string, url: string): void {
  explainOnce(
    auth,
    url,
    (path, base) =>
      `authRouter(auth) is mounted under "${mountPath}", so it sees "${path}" for "${mountPath}${path}"; its routes are at "${auth.config.basePath}/auth/…" below where it is mounted. Mount it with app.use(authRouter(auth)) and no path, or set http.basePath to "${base}".`,
  );
}

/**
 * Writes once per auth instance the line `explain` makes of a request to `url` that names a route
 * under a base path other than the configured one: nothing for a path that names no route.
 */
function explainOnce(auth: Auth, url: string, explain: (path: string, base: string) => string): void {
  if (explained.has(auth)) return;
  const path = normalizePath(url);
  if (!path.includes("/auth")) return;
  const base = basePathNaming(path);
  if (base === undefined || base === auth.config.basePath) return;
  explained.add(auth);
  writeOperatorLine(explain(path, base));
}

/**
 * For an adapter that matches its routes against the whole path the client sent, whatever it is
 * mounted under (Hono's `authApp`, `authRoutes`), mounted under `mountPath`
 * (`app.route("/svc", authApp(auth))`): when a request it does not serve names a route under
 * another base path, explains once on stderr which `http.basePath` to set, or to mount it at the
 * root. Nothing is said when the request names no route at all.
 *
 * @example
 * ```ts
 * if (!servesPath(auth, target)) explainWholePathMount(auth, "/svc", target);
 * ```
 */
export function explainWholePathMount(auth: Auth, mountPath: string, url: string): void {
  explainOnce(
    auth,
    url,
    (path, base) =>
      `authApp(auth) is mounted under "${mountPath}" and matches the whole path the client sent, "${path}", so its routes are at "${auth.config.basePath}/auth/…" from the root, never below the mount. Set http.basePath to "${base}", or mount it at the root with app.route("/", authApp(auth)).`,
  );
}
