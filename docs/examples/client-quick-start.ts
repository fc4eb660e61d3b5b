import { type AuthClient, createAuthClient } from "@portcullis/client";

/** The page's one client; `baseUrl` is the server's `http.basePath` (absolute in Node). */
export function createClient(showSignInForm: (notice: string) => void, baseUrl = "/api/v1"): AuthClient {
  const client = createAuthClient({ baseUrl });
  client.on("signedOut", ({ reason }) => showSignInForm(reason === "session_ended" ? "Your session has ended." : ""));
  return client;
}

/** Signs in, with a TOTP code when the account has the second factor on, then calls a route of the app. */
export async function signInAndLoad(
  client: AuthClient,
  credentials: { username: string; password: string },
  askForCode: () => Promise<string>,
): Promise<{ owner: string }> {
  const step = await client.login(credentials);
  if (step.status === "totp_required") await step.verifyTotp(await askForCode());
  const response = await client.fetch("/api/v1/things"); // the bearer token attached, one refresh on 40101
  return (await response.json()) as { owner: string };
}
