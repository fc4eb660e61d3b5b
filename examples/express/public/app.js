// The demo page: plain JavaScript, no build step. Tokens stay in the variables below, never in
// web storage or cookies, and every text from the server is shown with textContent.
// @simplewebauthn/browser comes from this server (its ES modules, out of node_modules), not a CDN.

import {
  browserSupportsWebAuthn,
  sendSignal,
  startAuthentication,
  startRegistration,
} from "./vendor/simplewebauthn-browser/index.js";

const api = "/api/v1/auth";

/** The signed-in session: { accessToken, refreshToken, user }, or null. */
let session = null;
/** The temporary token of a login that awaits its second factor, or null. */
let tempToken = null;
/** Whether the second-factor form takes a recovery code instead of a TOTP code. */
let useRecovery = false;
/** The object URL of the QR code image shown, to release it later. */
let qrUrl = null;
/** Whether the server has passkeys on and this browser can use them (set once the page has loaded). */
let passkeysAvailable = false;
/**
 * The first factors a sign-in can begin with: what the status line says when it signs in, or
 * when a second factor is still needed, and the prompt for that second factor.
 */
const passwordFactor = { noun: "password", accepted: "Password accepted", signedIn: "Signed in." };
const passkeyFactor = { noun: "passkey", accepted: "Passkey accepted", signedIn: "Signed in with a passkey." };

/** The first factor of a sign-in with a provider, named as the server lists it. */
function providerFactor(displayName) {
  return {
    noun: `sign-in with ${displayName}`,
    accepted: `Sign-in with ${displayName} accepted`,
    signedIn: `Signed in with ${displayName}.`,
  };
}

/** What the sign-in awaiting its second factor began with: one of the factors above. */
let firstFactor = passwordFactor;

const $ = (id) => document.getElementById(id);

function setStatus(text, kind = "info") {
  const status = $("status");
  status.textContent = text;
  status.className = kind;
}

function show(sectionId) {
  for (const id of ["sign-in", "second-factor", "account", "recovery-codes"]) $(id).hidden = id !== sectionId;
}

/** Reads the envelope of a response; anything that is not one becomes a 50000-like error. */
async function readEnvelope(response) {
  try {
    const envelope = await response.json();
    if (typeof envelope?.code === "number") return { ...envelope, retryAfter: response.headers.get("retry-after") };
  } catch {
    // not JSON: fall through
  }
  return { code: 50000, message: `Unexpected answer (HTTP ${response.status})` };
}

/** A readable message for an error envelope. */
function describe(envelope) {
  if (envelope.code === 42900 && envelope.retryAfter) return `${envelope.message} (retry in ${envelope.retryAfter} s)`;
  return `${envelope.message} (code ${envelope.code})`;
}

/**
 * Calls the API. With `bearer`, sends the access token; on 40101 it refreshes once and
 * retries, as the contract asks clients to do. `extraHeaders` carries the WebAuthn ceremony id.
 */
async function call(method, path, body, bearer = false, extraHeaders = {}, retried = false) {
  const headers = { ...extraHeaders };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (bearer && session) headers.authorization = `Bearer ${session.accessToken}`;
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  const envelope = await readEnvelope(response);
  if (bearer && !retried && envelope.code === 40101 && session) {
    if (await refreshTokens()) return call(method, path, body, true, extraHeaders, true);
    endSession("Your session has ended; sign in again.");
  }
  return envelope;
}

function startSession(tokens) {
  session = { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, user: tokens.user };
  tempToken = null;
  renderAccount(tokens.user);
  show("account");
  loadPasskeys();
}

/** Forgets the tokens of this page and returns to sign-in. */
function endSession(message, kind = "info") {
  session = null;
  tempToken = null;
  releaseQr();
  $("things").replaceChildren();
  $("passkey-list").replaceChildren();
  show("sign-in");
  setStatus(message, kind);
}

async function refreshTokens() {
  if (!session) return false;
  const envelope = await call("POST", `${api}/refresh`, { refreshToken: session.refreshToken });
  if (envelope.code !== 0) return false;
  session = { accessToken: envelope.data.accessToken, refreshToken: envelope.data.refreshToken, user: envelope.data.user };
  return true;
}

/** Ends the server-side session of the refresh token; used when a token version change already signed us out. */
async function logoutQuietly() {
  if (session) await call("POST", `${api}/logout`, { refreshToken: session.refreshToken });
}

function renderAccount(user) {
  const rows = [
    ["id", user.id],
    ["username", user.username],
    ["roles", user.roles.length ? user.roles.join(", ") : "(none)"],
    ["totpEnabled", String(user.totpEnabled)],
  ];
  $("me").replaceChildren(
    ...rows.flatMap(([name, value]) => {
      const dt = document.createElement("dt");
      dt.textContent = name;
      const dd = document.createElement("dd");
      dd.textContent = value;
      return [dt, dd];
    }),
  );
  $("totp-off").hidden = user.totpEnabled;
  $("totp-on").hidden = !user.totpEnabled;
  $("totp-setup").hidden = true;
  $("passkeys").hidden = !passkeysAvailable;
}

function releaseQr() {
  if (qrUrl) URL.revokeObjectURL(qrUrl);
  qrUrl = null;
  $("qr").removeAttribute("src");
}

function formValues(form) {
  return Object.fromEntries(new FormData(form).entries());
}

/**
 * The answer to a first factor (a password, a passkey, or a provider's sign-in): tokens, or 40102
 * with a temporary token for the second factor, the same way for all.
 */
function afterFirstFactor(envelope, factor) {
  if (envelope.code === 0) {
    startSession(envelope.data);
    setStatus(factor.signedIn, "ok");
  } else if (envelope.code === 40102) {
    tempToken = envelope.data.tempToken;
    firstFactor = factor;
    setRecoveryMode(false);
    show("second-factor");
    setStatus(`${factor.accepted}; a second factor is required.`);
  } else {
    setStatus(describe(envelope), "error");
  }
}

// Sign in: tokens, or 40102 with a temporary token for the second factor.
$("sign-in-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const { username, password } = formValues(event.target);
  const envelope = await call("POST", `${api}/login`, { username, password });
  event.target.elements.password.value = "";
  afterFirstFactor(envelope, passwordFactor);
});

function setRecoveryMode(recovery) {
  useRecovery = recovery;
  $("second-factor-label").textContent = recovery ? "Recovery code" : "Code";
  $("second-factor-prompt").textContent = recovery
    ? "Enter one of the recovery codes you saved. Each works once; dashes and case do not matter."
    : `Your ${firstFactor.noun} was accepted. Enter the 6-digit code from your authenticator app.`;
  $("toggle-recovery").textContent = recovery ? "Use a code from the app instead" : "Use a recovery code instead";
  const input = $("second-factor-form").elements.code;
  input.value = "";
  input.inputMode = recovery ? "text" : "numeric";
  input.focus();
}

$("toggle-recovery").addEventListener("click", () => setRecoveryMode(!useRecovery));
$("cancel-second-factor").addEventListener("click", () => endSession("Sign-in cancelled."));

$("second-factor-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const value = event.target.elements.code.value.trim();
  const envelope = useRecovery
    ? await call("POST", `${api}/2fa/recovery`, { tempToken, recoveryCode: value })
    : await call("POST", `${api}/2fa/verify`, { tempToken, code: value });
  event.target.elements.code.value = "";
  if (envelope.code === 0) {
    startSession(envelope.data);
    setStatus(useRecovery ? "Signed in with a recovery code; that code is now spent." : "Signed in with two factors.", "ok");
  } else if (envelope.code === 40100) {
    endSession(`${describe(envelope)}: sign in again.`, "error");
  } else {
    setStatus(describe(envelope), "error");
  }
});

$("reload-me").addEventListener("click", async () => {
  const envelope = await call("GET", `${api}/me`, undefined, true);
  if (!session) return;
  if (envelope.code === 0) {
    session.user = envelope.data;
    renderAccount(envelope.data);
    setStatus("GET /auth/me answered.", "ok");
  } else {
    setStatus(describe(envelope), "error");
  }
});

$("refresh").addEventListener("click", async () => {
  if (await refreshTokens()) setStatus("New tokens issued; the previous refresh token is spent.", "ok");
  else endSession("The refresh token was refused; sign in again.", "error");
});

$("logout").addEventListener("click", async () => {
  const envelope = await call("POST", `${api}/logout`, { refreshToken: session?.refreshToken });
  endSession(
    envelope.code === 0 ? "Signed out; the session is revoked." : describe(envelope),
    envelope.code === 0 ? "ok" : "error",
  );
});

$("load-things").addEventListener("click", async () => {
  const envelope = await call("GET", "/api/v1/things", undefined, true);
  if (!session) return;
  if (envelope.code !== 0) {
    setStatus(describe(envelope), "error");
    return;
  }
  $("things").replaceChildren(
    ...envelope.data.map((thing) => {
      const item = document.createElement("li");
      const name = document.createElement("span");
      name.textContent = thing.name;
      const remove = document.createElement("button");
      remove.type = "button";
      remove.textContent = "Delete (admin only)";
      remove.addEventListener("click", () => deleteThing(thing, item));
      item.append(name, " ", remove);
      return item;
    }),
  );
  setStatus(`GET /api/v1/things answered with ${envelope.data.length} things.`, "ok");
});

async function deleteThing(thing, item) {
  const envelope = await call("DELETE", `/api/v1/things/${encodeURIComponent(thing.id)}`, undefined, true);
  if (!session) return;
  if (envelope.code === 0) {
    item.remove();
    setStatus(`Deleted "${thing.name}".`, "ok");
  } else {
    setStatus(describe(envelope), "error");
  }
}

/** The body of a step that needs re-authentication: the password only when the user typed one. */
function withPassword(body, password) {
  return password ? { ...body, password } : body;
}

// TOTP enrolment: setup → QR code and secret → first code → enable → recovery codes, shown once.
// Both steps need the current password unless the sign-in is under 5 minutes old (40001 otherwise).
$("setup-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const { password } = formValues(event.target);
  const envelope = await call("POST", `${api}/2fa/setup`, withPassword({}, password), true);
  event.target.reset();
  if (!session) return;
  if (envelope.code !== 0) {
    setStatus(describe(envelope), "error");
    return;
  }
  $("secret").textContent = envelope.data.secret;
  $("totp-off").hidden = true;
  $("totp-setup").hidden = false;
  setStatus("Scan the QR code, then enter the code the app shows.");
  // The otpauth:// URL goes in a POST body, never in a URL; the SVG is shown through a blob URL.
  releaseQr();
  const response = await fetch("/demo/qr", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${session.accessToken}` },
    body: JSON.stringify({ text: envelope.data.otpauthUrl }),
    cache: "no-store",
  });
  if (response.ok) {
    qrUrl = URL.createObjectURL(new Blob([await response.text()], { type: "image/svg+xml" }));
    $("qr").src = qrUrl;
  } else {
    setStatus("The QR code could not be drawn; type the secret into the app instead.", "error");
  }
});

$("enable-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const { code, password } = formValues(event.target);
  const envelope = await call("POST", `${api}/2fa/enable`, withPassword({ code: code.trim() }, password), true);
  event.target.reset();
  if (!session) return;
  if (envelope.code !== 0) {
    setStatus(describe(envelope), "error");
    return;
  }
  await logoutQuietly();
  session = null;
  releaseQr();
  $("secret").textContent = "";
  $("recovery-code-list").replaceChildren(
    ...envelope.data.recoveryCodes.map((recoveryCode) => {
      const item = document.createElement("li");
      item.textContent = recoveryCode;
      return item;
    }),
  );
  show("recovery-codes");
  setStatus("Two-factor sign-in is on. You were signed out.", "ok");
});

$("recovery-codes-done").addEventListener("click", () => {
  $("recovery-code-list").replaceChildren();
  endSession("Sign in with your password, then a code from the app. (Wait for a new code: each works once.)");
});

$("disable-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const { code, password } = formValues(event.target);
  const body = code.trim() ? { code: code.trim() } : { password };
  const envelope = await call("POST", `${api}/2fa/disable`, body, true);
  event.target.reset();
  if (!session) return;
  if (envelope.code !== 0) {
    setStatus(describe(envelope), "error");
    return;
  }
  await logoutQuietly();
  endSession("Two-factor sign-in is off. That signed you out (your token version rose); sign in again.", "ok");
});

// Passkeys (WebAuthn). The server sends standard options JSON; @simplewebauthn/browser runs the
// ceremony and returns the standard response JSON, which goes back with the ceremony id header.

const ceremonyHeader = "x-webauthn-ceremony";

/** A readable message for an error of the browser's WebAuthn prompt. */
function ceremonyFailure(error) {
  if (error?.name === "NotAllowedError") return "The passkey prompt was closed or timed out; nothing was sent.";
  if (error?.code === "ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED")
    return "This authenticator already holds one of your passkeys.";
  if (error?.code === "ERROR_INVALID_RP_ID" || error?.code === "ERROR_INVALID_DOMAIN") {
    return `${error.message}: open this page at http://localhost:${location.port}/`;
  }
  return `The browser refused: ${error?.message ?? error}`;
}

/**
 * Whether the page was opened at an IP address. WebAuthn refuses those (the passkeys of this demo
 * belong to the name "localhost"), and a provider sends the browser back to the redirect URI's
 * name, localhost, where the binding cookie of the sign-in it began at the IP address is missing.
 */
const openedAtIpAddress = /^[0-9.]+$|^\[/.test(location.hostname);

/**
 * Shows the passkey parts of the page when the server has passkeys on and the browser can use
 * them; at an IP address, says where the page works instead (and why the provider buttons are
 * hidden, when `providersListed`).
 */
async function loadPasskeyConfig(providersListed) {
  const unavailable = $("passkeys-unavailable");
  if (!browserSupportsWebAuthn()) {
    unavailable.textContent = "This browser does not support passkeys (WebAuthn).";
    unavailable.hidden = false;
    return;
  }
  if (openedAtIpAddress) {
    const link = document.createElement("a");
    link.href = `http://localhost:${location.port}/`;
    link.textContent = link.href;
    const what = providersListed ? "Passkeys and sign-in with a provider work" : "Passkeys work";
    unavailable.replaceChildren(`${what} only on a domain name: open this page at `, link, ".");
    unavailable.hidden = false;
    return;
  }
  const envelope = await call("GET", `${api}/public-key/config`);
  passkeysAvailable = envelope.code === 0 && envelope.data?.enabled === true;
  $("passkey-sign-in").hidden = !passkeysAvailable;
  if (session) renderAccount(session.user);
}

// Sign in with a passkey: no username, so the browser offers every passkey it holds for this
// site (a discoverable credential). A complete sign-in, or 40102 as after a password.
$("passkey-sign-in-button").addEventListener("click", async (event) => {
  const button = event.currentTarget;
  button.disabled = true;
  try {
    const begun = await call("POST", `${api}/public-key/login/begin`, {});
    if (begun.code !== 0) {
      setStatus(describe(begun), "error");
      return;
    }
    setStatus("Choose a passkey in your browser's prompt.");
    let assertion;
    try {
      assertion = await startAuthentication({ optionsJSON: begun.data.options });
    } catch (error) {
      setStatus(ceremonyFailure(error), "error");
      return;
    }
    const envelope = await call("POST", `${api}/public-key/login/finish`, assertion, false, {
      [ceremonyHeader]: begun.data.ceremonyId,
    });
    afterFirstFactor(envelope, passkeyFactor);
  } finally {
    button.disabled = false;
  }
});

/** Lists the signed-in user's passkeys. */
async function loadPasskeys() {
  if (!passkeysAvailable || !session) return;
  const envelope = await call("GET", `${api}/public-key/credentials`, undefined, true);
  if (!session) return;
  if (envelope.code !== 0) {
    setStatus(describe(envelope), "error");
    return;
  }
  $("passkey-none").hidden = envelope.data.length > 0;
  $("passkey-list").replaceChildren(...envelope.data.map(passkeyItem));
}

function formatTime(epochMs) {
  return epochMs === null ? "never" : new Date(epochMs).toLocaleString();
}

/** One passkey: its name and dates, a rename form, and a revoke button that asks to be clicked twice. */
function passkeyItem(passkey) {
  const item = document.createElement("li");
  item.dataset.passkeyId = passkey.id;
  const name = document.createElement("strong");
  name.className = "passkey-label";
  name.textContent = passkey.label;
  const details = document.createElement("span");
  details.className = "hint";
  const synced = passkey.backupEligible ? "synced passkey" : "device-bound";
  details.textContent = ` added ${formatTime(passkey.createdAt)}, last used ${formatTime(passkey.lastUsedAt)}, ${synced}`;

  const form = document.createElement("form");
  form.className = "passkey-rename";
  const label = document.createElement("label");
  const input = document.createElement("input");
  input.name = "label";
  input.maxLength = 64;
  input.required = true;
  input.value = passkey.label;
  label.append("New name ", input);
  const rename = document.createElement("button");
  rename.type = "submit";
  rename.textContent = "Rename";
  const revoke = document.createElement("button");
  revoke.type = "button";
  revoke.className = "passkey-revoke";
  revoke.textContent = "Revoke";
  form.append(label, rename, revoke);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    renamePasskey(passkey, input.value);
  });
  revoke.addEventListener("click", () => {
    if (revoke.dataset.armed === "true") {
      revokePasskey(passkey);
      return;
    }
    revoke.dataset.armed = "true";
    revoke.textContent = "Click again to revoke (signs you out)";
  });

  item.append(name, details, form);
  return item;
}

async function renamePasskey(passkey, label) {
  const path = `${api}/public-key/credentials/${encodeURIComponent(passkey.id)}`;
  const envelope = await call("PUT", path, { label }, true);
  if (!session) return;
  if (envelope.code !== 0) {
    setStatus(describe(envelope), "error");
    return;
  }
  await loadPasskeys();
  setStatus(`Passkey "${passkey.label}" renamed to "${label.trim()}".`, "ok");
}

// Revoking raises the token version: every session ends, this one too. The browser is then told
// the passkey is gone (WebAuthn's signal API, where it exists), so that the authenticator can
// delete it and stop offering it. Only after a revocation the server confirmed: a failed sign-in
// (40100) says nothing about whether the passkey is known, and must not delete it.
async function revokePasskey(passkey) {
  const envelope = await call("DELETE", `${api}/public-key/credentials/${encodeURIComponent(passkey.id)}`, undefined, true);
  if (!session) return;
  if (envelope.code !== 0) {
    setStatus(describe(envelope), "error");
    return;
  }
  await logoutQuietly();
  // The demo's rpId is the host it is opened at, "localhost".
  const forgotten = await sendSignal({ signalName: "unknownCredential", rpID: location.hostname, credentialID: passkey.id }).then(
    () => true,
    () => false,
  );
  const removal = forgotten ? " Your browser was asked to remove it from the authenticator." : "";
  endSession(
    `Passkey "${passkey.label}" revoked.${removal} That signed you out everywhere (your token version rose); sign in again.`,
    "ok",
  );
}

// Register: re-authentication (the password if typed, else a sign-in under 5 minutes old), the
// browser creates the passkey, the server stores it and raises the token version: signed out.
$("passkey-register-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const { label, password } = formValues(form);
  form.elements.password.value = "";
  const begun = await call("POST", `${api}/public-key/register/begin`, withPassword({ label }, password), true);
  if (!session) return;
  if (begun.code !== 0) {
    setStatus(describe(begun), "error");
    return;
  }
  setStatus("Create the passkey in your browser's prompt.");
  let attestation;
  try {
    attestation = await startRegistration({ optionsJSON: begun.data.options });
  } catch (error) {
    setStatus(ceremonyFailure(error), "error");
    return;
  }
  const envelope = await call("POST", `${api}/public-key/register/finish`, attestation, true, {
    [ceremonyHeader]: begun.data.ceremonyId,
  });
  if (!session) return;
  if (envelope.code !== 0) {
    setStatus(describe(envelope), "error");
    return;
  }
  form.reset();
  await logoutQuietly();
  endSession(
    `Passkey "${envelope.data.label}" registered. That signed you out everywhere (your token version rose): sign in again, with your new passkey.`,
    "ok",
  );
  $("passkey-sign-in-button").focus();
});

// Sign in with a provider (OAuth 2.0 / OpenID Connect). authorize sets the HttpOnly cookie that
// binds the sign-in to this browser and answers the provider's URL; the browser leaves for the
// provider's pages and comes back to this page at /oauth/<provider>/callback, the redirect URI.

/** The path of this page when a provider sends the browser back: `/oauth/<provider>/callback`. */
const providerCallbackPath = /^\/oauth\/([\w-]+)\/callback$/;

/** Shows a "Sign in with …" button for each provider the server lists, and returns the list. */
async function loadProviders() {
  const envelope = await call("GET", `${api}/oauth/providers`);
  const providers = envelope.code === 0 ? envelope.data : [];
  $("provider-buttons").replaceChildren(
    ...providers.map((provider) => {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = `Sign in with ${provider.displayName}`;
      button.addEventListener("click", () => beginProviderSignIn(provider, button));
      return button;
    }),
  );
  $("provider-sign-in").hidden = providers.length === 0 || openedAtIpAddress;
  return providers;
}

/** Asks the server for the provider's URL, to come back to this path, and goes there. */
async function beginProviderSignIn(provider, button) {
  button.disabled = true;
  const query = new URLSearchParams({ redirect: location.pathname });
  const envelope = await call("GET", `${api}/oauth/${encodeURIComponent(provider.name)}/authorize?${query}`);
  if (envelope.code !== 0) {
    button.disabled = false;
    setStatus(describe(envelope), "error");
    return;
  }
  setStatus(`Taking you to ${provider.displayName}…`);
  location.assign(envelope.data.authUrl);
}

/**
 * Back from the provider: its query (code, state and iss, or an error) goes to the callback route
 * unchanged, with the binding cookie. The address bar then drops it for the return path the
 * sign-in began with, and the answer is taken like a password's: tokens, or the second factor.
 */
async function finishProviderSignIn(name, providers) {
  const displayName = providers.find((provider) => provider.name === name)?.displayName ?? name;
  setStatus(`Finishing the sign-in with ${displayName}…`);
  const envelope = await call("GET", `${api}/oauth/${encodeURIComponent(name)}/callback${location.search}`);
  history.replaceState(null, "", envelope.data?.returnPath ?? "/");
  afterFirstFactor(envelope, providerFactor(displayName));
}

/** Sets up the sign-in choices, then finishes a provider's sign-in when the page is its callback. */
async function startPage() {
  const providers = await loadProviders();
  await loadPasskeyConfig(providers.length > 0);
  const returning = providerCallbackPath.exec(location.pathname);
  if (returning) await finishProviderSignIn(returning[1], providers);
}

startPage();
