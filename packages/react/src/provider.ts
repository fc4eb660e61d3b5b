import type { AuthClient } from "@portcullis/client";
import { type ReactNode, createContext, createElement, useContext } from "react";

const AuthClientContext = createContext<AuthClient | null>(null);

/** The props of {@link AuthProvider}. */
export interface AuthProviderProps {
  /** The page's one client, from `createAuthClient`; made once, outside the component tree. */
  client: AuthClient;
  children?: ReactNode;
}

/**
 * Hands `client` to every hook below it. Rendering it sends nothing and reads no storage: the
 * session is read once the page runs in the browser (see {@link useSession}).
 *
 * @example
 * ```tsx
 * const client = createAuthClient({ baseUrl: "/api/v1" });
 * createRoot(document.getElementById("root")!).render(
 *   <AuthProvider client={client}>
 *     <App />
 *   </AuthProvider>,
 * );
 * ```
 */
export function AuthProvider({ client, children }: AuthProviderProps): ReactNode {
  return createElement(AuthClientContext.Provider, { value: client }, children);
}

/**
 * The client of the nearest {@link AuthProvider}, typed with the server's auth instance
 * (`useAuthClient<typeof auth>()`), for the calls no hook wraps (`client.fetch`, `client.totp`, …).
 *
 * @throws {Error} outside an `AuthProvider`.
 * @example
 * ```tsx
 * const client = useAuthClient();
 * const load = async () => (await client.fetch("/api/v1/things")).json();
 * ```
 */
export function useAuthClient<Server = unknown>(): AuthClient<Server> {
  const client = useContext(AuthClientContext);
  if (client === null) throw new Error("useAuthClient and the Portcullis hooks must be used inside an <AuthProvider client={…}>");
  return client as AuthClient<Server>;
}
