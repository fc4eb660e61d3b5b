// The demo page, on @portcullis/client: plain JavaScript, no build step. The client comes from this
// server as one script, bundled from its source at startup (see src/page-client-bundle.ts). It keeps
// the tokens in memory, never in web storage or cookies; sends one refresh however many requests
// meet an expired access token; and runs the passkey and provider sign-ins. Every text from the
// server is shown with textContent. The client is `window.portcullis`, for the browser tests and
// the devtools console: `await portcullis.me()`, `await portcullis.fetch("/api/v1/things")`.

import {
  AuthClientError,
  browserSupportsWebAuthn,
  browserSupportsWebAuthnAutofill,
  createAuthClient,
  deviceKind,
  deviceName,
  placeName,
  sendSignal,
  tokenFromLink,
} from "./vendor/portcullis-client.js";

// `reauthenticate`: when a change went without a proof and the server wants one (40001), the
// client asks the page, which asks the user, and makes the call once more with it.
// A listener of the page that throws is a bug of the page: the console says so (and the browser
// tests fail on it).
const client = createAuthClient({
  baseUrl: "/api/v1",
  reauthenticate: askToReauthenticate,
  onListenerError: (error, event) => console.error(`The page's ${event} listener failed:`, error),
});
window.portcullis = client;

/** Whether the client holds tokens: set by its signedIn and signedOut events. */
let signedIn = false;
/** The sign-in that awaits its second factor (`verifyTotp`, `useRecoveryCode`), or null. */
let pendingStep = null;
/** Whether the second-factor form takes a recovery code instead of a TOTP code. */
let useRecovery = false;
/** The object URL of the QR code image shown, to release it later. */
let qrUrl = null;
/** Whether the server has passkeys on and this browser can use them (set once the page has loaded). */
let passkeysAvailable = false;
/** How many passkeys the signed-in user has, as last listed: the dialog offers one only when there is one. */
let passkeyCount = 0;
/** Whether, besides, the browser offers passkeys in the username field's autofill (conditional mediation). */
let passkeyAutofillAvailable = false;
/** The passkey autofill under way (its AbortController), or null. */
let passkeyAutofill = null;
/**
 * The first factors a sign-in can begin with: what the status line says when it signs in, or
 * when a second factor is still needed, and the prompt for that second factor.
 */
const passwordFactor = { noun: "password", accepted: "Password accepted", signedIn: "Signed in." };
const passkeyFactor = { noun: "passkey", accepted: "Passkey accepted", signedIn: "Signed in with a passkey." };
const passkeySignUpFactor = {
  noun: "passkey",
  accepted: "Account made",
  signedIn: "Signed up with a passkey: it is how you sign in.",
};

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

/** A new element with `properties` (textContent, type, className…) and `children`. */
function element(tag, properties = {}, ...children) {
  const made = Object.assign(document.createElement(tag), properties);
  made.append(...children);
  return made;
}

/** The status line at the top: what just happened (kind "ok" or "info"), or an error no control caused ("error"). */
function setStatus(text, kind = "info") {
  const status = $("status");
  status.textContent = text;
  status.className = kind;
}

/** Removes every error shown beside a control (the dialog's own error line stays, hidden or not). */
function clearErrors(within = document) {
  for (const slot of within.querySelectorAll(".error:not(#reauthenticate-error)")) slot.remove();
}

function show(sectionId) {
  const sections = [
    "sign-in",
    "forgot-password",
    "reset-password",
    "verify-email",
    "accept-invitation",
    "second-factor",
    "account",
    "recovery-codes",
  ];
  for (const id of sections) $(id).hidden = id !== sectionId;
  clearErrors();
  syncPasskeyAutofill();
}

/**
 * Offers the passkeys in the username field's autofill while the sign-in form is shown to someone
 * signed out, and stops offering them otherwise. The server keeps nothing for an offer that is
 * never taken up, so it is made on every visit. A passkey picked there signs in as the button does.
 */
function syncPasskeyAutofill() {
  const wanted = passkeyAutofillAvailable && !signedIn && !$("sign-in").hidden;
  if (!wanted) {
    stopPasskeyAutofill();
    return;
  }
  if (passkeyAutofill) return;
  const controller = new AbortController();
  passkeyAutofill = controller;
  client.passkeys
    .autofill({ signal: controller.signal })
    .then(
      async (step) => {
        if (passkeyAutofill === controller) passkeyAutofill = null;
        await afterFirstFactor(step, passkeyFactor);
      },
      (error) => {
        if (passkeyAutofill === controller) passkeyAutofill = null;
        // Stopped by the page, or the browser's request ended (another prompt took its place, or it
        // failed): the password and the passkey button still work, so there is nothing to tell.
        if (controller.signal.aborted || error?.kind === "passkey_ceremony") return;
        showMessageAt($("sign-in-form"), describe(error));
      },
    )
    .catch(showError);
}

/** Stops offering passkeys in the autofill: the user signs in another way, or leaves the form. */
function stopPasskeyAutofill() {
  passkeyAutofill?.abort();
  passkeyAutofill = null;
}

/**
 * Where the error of `control` is shown: at the end of its row (a session, a passkey, a user), or
 * right under its form or its line of buttons. Made on first use, and found again after.
 */
function errorSlotFor(control) {
  const row = control.closest("li");
  if (row) {
    return row.querySelector(":scope > .error") ?? row.appendChild(element("p", { className: "error", role: "alert" }));
  }
  const anchor = control.closest("form, .actions, p") ?? control;
  if (anchor.nextElementSibling?.classList.contains("error")) return anchor.nextElementSibling;
  const slot = element("p", { className: "error", role: "alert" });
  anchor.after(slot);
  return slot;
}

/** Shows `message` beside `control`, or on the status line when the control is not on screen. */
function showMessageAt(control, message) {
  if (!control.checkVisibility()) {
    setStatus(message, "error");
    return;
  }
  errorSlotFor(control).textContent = message;
  // The status line's last news is not the news any more.
  setStatus("");
}

/** Removes the error shown beside `control`, if any. */
function clearErrorAt(control) {
  const row = control.closest("li");
  const slot = row ? row.querySelector(":scope > .error") : (control.closest("form, .actions, p") ?? control).nextElementSibling;
  if (slot?.classList.contains("error")) slot.remove();
}

function formValues(form) {
  return Object.fromEntries(new FormData(form).entries());
}

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
 * What the page says for a server's answer, by its business code, in words for the person using
 * it. The server's own message is kept where it already speaks to them (a wrong password, a
 * taken name, a password policy); the code itself goes to the console, for the developer.
 */
const plainMessages = {
  40001: "Something is missing: fill in every field and try again.",
  40002: "Something in the form is not in the right shape: check it and try again.",
  40101: "Your session has ended. Sign in again.",
  40103: "That code is not right, or it was used already. Try the next code from your app.",
  40104: "This needs a more recent sign-in: confirm it is you, then try again.",
  40300: "You are not allowed to do this.",
  40400: "This is not available here.",
  50000: "Something went wrong on our side. Try again in a moment.",
};

/** The codes whose server message is already written for the person using the page. */
const codesWithPlainServerMessages = new Set([40100, 40900, 42200]);

/** The server's message as a sentence: its first letter as it is, a full stop at its end. */
const sentence = (text) => (/[.!?]$/.test(text) ? text : `${text}.`);

/** A readable message for an error of the client (an AuthClientError) or of the page. */
function describe(error) {
  if (error?.kind === "passkey_ceremony") return ceremonyFailure(error.cause);
  if (typeof error?.code !== "number") {
    if (error?.kind === "network") return "The server cannot be reached. Check your connection and try again.";
    return error?.message ?? String(error);
  }
  console.info(`[portcullis] ${error.code}: ${error.message}`);
  if (error.plain) return sentence(error.message);
  if (error.code === 42900) {
    return error.retryAfter
      ? `Too many attempts. Try again in ${counted(error.retryAfter, "second")}.`
      : "Too many attempts. Try again later.";
  }
  if (codesWithPlainServerMessages.has(error.code)) return sentence(error.message);
  return plainMessages[error.code] ?? plainMessages[50000];
}

/** An error the page words itself for the person using it (shown as it is), keeping the server's code for the console. */
function plainError(message, code, status) {
  const error = new AuthClientError(message, { kind: "server", code, status });
  error.plain = true;
  return error;
}

/**
 * Shows an error beside `control` (on the status line without one), unless it is the end of the
 * session, which the signedOut listener has announced already.
 */
function showError(error, control) {
  if (error?.code === 40101 && !signedIn) return;
  if (error === cancelledProof || (error?.code === 40104 && stepUpCancelled)) {
    stepUpCancelled = false;
    setStatus("Cancelled: nothing was changed.");
    return;
  }
  if (control) showMessageAt(control, describe(error));
  else setStatus(describe(error), "error");
}

/**
 * Runs `action` on each `type` event of `target` (an element or its id), keeps a form from
 * submitting, and shows what the action throws beside the control (the form, the button).
 */
function listen(target, type, action) {
  const control = typeof target === "string" ? $(target) : target;
  control.addEventListener(type, async (event) => {
    if (type === "submit") event.preventDefault();
    clearErrorAt(control);
    try {
      await action(event);
    } catch (error) {
      showError(error, control);
    }
  });
}

/**
 * Wraps a form's action whose 40100 can only mean that the password typed was not right (the
 * server's words, "Invalid username or password", are for a sign-in), and says so plainly.
 */
function checkingPassword(action) {
  return async (event) => {
    try {
      return await action(event);
    } catch (error) {
      if (error?.code !== 40100) throw error;
      throw plainError("The password is not right", 40100, 401);
    }
  };
}

/**
 * For a button that ends or removes something: the first click arms it (it asks to be clicked
 * again, `confirmText`), the second goes ahead. Returns whether to go ahead.
 */
function confirmedByASecondClick(button, confirmText) {
  if (button.dataset.armed === "true") return true;
  button.dataset.armed = "true";
  button.dataset.label = button.textContent;
  button.textContent = confirmText;
  return false;
}

client.on("signedIn", ({ user }) => {
  signedIn = true;
  pendingStep = null;
  renderAccount(user);
  showAccountSection("profile");
  // Signed in from an invitation's page: the invitation is what the user came for.
  show(invitationWaiting() ? "accept-invitation" : "account");
  loadOrganizations().catch((error) => showError(error, $("reload-organizations")));
  loadPasskeys().catch((error) => showError(error, $("passkey-list")));
  loadSessions().catch((error) => showError(error, $("reload-sessions")));
  if (isAdmin(user)) loadUsers().catch((error) => showError(error, $("user-list")));
});

// Every way out: logout, signing out this session or every one, or a refresh the server refused
// (this session was ended from another, by an administrator, or expired). The user's own
// security changes (TOTP, passkeys, the password) keep this session: they end only the others.
client.on("signedOut", ({ reason }) => {
  signedIn = false;
  shownUser = null;
  releaseQr();
  for (const list of [
    "things",
    "passkey-list",
    "session-list",
    "user-list",
    "organization-list",
    "member-list",
    "invitation-list",
  ]) {
    $(list).replaceChildren();
  }
  selectedOrganization = null;
  $("organization-manage").hidden = true;
  $("passkey-offer").hidden = true;
  passkeyCount = 0;
  show("sign-in");
  if (reason === "session_ended") setStatus("Your session has ended; sign in again.");
});

/** Whether the user holds the admin role: the page then shows the user list (the server checks it again). */
const isAdmin = (user) => user.roles.includes("admin");

/** "1 session", "2 sessions": a count with its noun. */
const counted = (count, noun) => `${count} ${noun}${count === 1 ? "" : "s"}`;

/** What the page says after one of the user's own security changes: the other sessions ended, this one stays. */
const othersSignedOut = "Your other devices were signed out; this one stays signed in.";

/** The signed-in user as the page last showed it, or null. */
let shownUser = null;

/** The signed-in user's id: the admin list offers no button for one's own account. */
let currentUserId = null;
/** Whether the signed-in user is an administrator: only then are the admin-only controls shown. */
let currentUserIsAdmin = false;

/**
 * Whether the account has a password. The demo's server adds `hasPassword` to the user object
 * (the `publicUser` hook); a server that does not is taken to have one, as most accounts do.
 */
const hasPassword = (user) => user.hasPassword !== false;

/** "12 March 2026": a date in the reader's own words. */
const formatDate = (epochMs) => new Date(epochMs).toLocaleDateString(undefined, { dateStyle: "long" });

/** "Administrator", "Member": what the account is, in a word, for the header. */
const accountKind = (user) => (isAdmin(user) ? "Administrator" : "Member");

function renderAccount(user) {
  shownUser = user;
  currentUserId = user.id;
  currentUserIsAdmin = isAdmin(user);
  $("account-name").textContent = user.username;
  $("account-avatar").textContent = user.username.slice(0, 1).toUpperCase();
  $("account-summary").textContent = [accountKind(user), user.email ?? "no email address"].join(" · ");
  // [field, label, value]: the field names the row for scripts and tests, the label for people.
  const rows = [
    ["username", "Username", user.username],
    ["email", "Email address", describeAddress(user)],
    ["roles", "Roles", user.roles.length ? user.roles.join(", ") : "none"],
    ["totpEnabled", "Two-step sign-in", user.totpEnabled ? "on" : "off"],
    ["hasPassword", "Password", hasPassword(user) ? "set" : "none: you sign in with a provider or a passkey"],
    ["createdAt", "Member since", typeof user.createdAt === "number" ? formatDate(user.createdAt) : "unknown"],
    ["id", "User id", user.id],
  ];
  $("me").replaceChildren(
    ...rows.flatMap(([field, label, value]) => {
      const term = element("dt", { textContent: label });
      term.dataset.field = field;
      return [term, element("dd", { textContent: value, className: field === "id" ? "mono" : "" })];
    }),
  );
  $("password").hidden = !hasPassword(user);
  $("email-state").textContent = user.email
    ? `Your address is ${describeAddress(user)}.${user.emailVerified ? " Password reset links go to it." : " Confirm it to receive password reset links: send a link to it again below."}`
    : "Your account has no address: add one to be able to reset a forgotten password.";
  $("totp-off").hidden = user.totpEnabled;
  $("totp-on").hidden = !user.totpEnabled;
  $("totp-setup").hidden = true;
  $("passkeys").hidden = !passkeysAvailable;
  $("tab-administration").hidden = !currentUserIsAdmin;
  if (!currentUserIsAdmin && !$("admin").hidden) showAccountSection("profile");
}

/** The user's address and whether it is verified: "demo@example.test (verified)", or "none". */
function describeAddress(user) {
  if (!user.email) return "none";
  return `${user.email} (${user.emailVerified ? "verified" : "not verified"})`;
}

// The account's sections (profile, security, sessions, organizations, administration): a tab list
// (WAI-ARIA's pattern: the arrow keys, Home and End move between the tabs shown).

/** The tabs of the account's sections, in their order. */
const accountTabs = [...document.querySelectorAll('#account-tabs [role="tab"]')];

/** The panel a tab shows: its `aria-controls`. */
const panelOf = (tab) => $(tab.getAttribute("aria-controls"));

/** Shows the account's section `name` ("profile", "security", "sessions", "organizations", "administration"). */
function showAccountSection(name) {
  for (const tab of accountTabs) {
    const selected = tab.id === `tab-${name}`;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    panelOf(tab).hidden = !selected;
  }
}

for (const tab of accountTabs) {
  tab.addEventListener("click", () => {
    showAccountSection(tab.id.slice("tab-".length));
    clearErrors($("account"));
  });
  tab.addEventListener("keydown", (event) => {
    const shown = accountTabs.filter((each) => !each.hidden);
    const at = shown.indexOf(tab);
    const next = {
      ArrowDown: shown[(at + 1) % shown.length],
      ArrowRight: shown[(at + 1) % shown.length],
      ArrowUp: shown[(at - 1 + shown.length) % shown.length],
      ArrowLeft: shown[(at - 1 + shown.length) % shown.length],
      Home: shown[0],
      End: shown.at(-1),
    }[event.key];
    if (!next) return;
    event.preventDefault();
    next.focus();
    next.click();
  });
}

/** Shows the user as the client last saw it (after a change the client noted, such as TOTP on or off). */
async function renderCurrentUser() {
  const user = await client.currentUser();
  if (user) renderAccount(user);
}

function releaseQr() {
  if (qrUrl) URL.revokeObjectURL(qrUrl);
  qrUrl = null;
  $("qr").removeAttribute("src");
}

/**
 * Offers a passkey after a sign-in when the server says so (a password or email sign-in of an
 * account with none, not declined lately) and this device has an authenticator (PL-13).
 */
async function offerPasskeyAfter(step) {
  $("passkey-offer").hidden = !(passkeysAvailable && (await client.passkeys.shouldOffer(step)));
}

/**
 * A first factor's step (password, passkey or provider): signed in (with the passkey offer decided
 * before the status says so), or on to the second factor.
 */
async function afterFirstFactor(step, factor) {
  if (step.status === "authenticated") {
    await offerPasskeyAfter(step);
    setStatus(factor.signedIn, "ok");
    return;
  }
  pendingStep = step;
  firstFactor = factor;
  setRecoveryMode(false);
  show("second-factor");
  setStatus(`${factor.accepted}; a second factor is required.`);
}

listen("sign-in-form", "submit", async (event) => {
  const { username, password } = formValues(event.target);
  event.target.elements.password.value = "";
  // Signed in, the page leaves the form, which stops the autofill (syncPasskeyAutofill).
  await afterFirstFactor(await client.login({ username, password }), passwordFactor);
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

/** Drops a sign-in that awaits its second factor, and shows the sign-in form with `message` (an error: under the form). */
function backToSignIn(message, kind = "info") {
  pendingStep = null;
  show("sign-in");
  if (kind === "error") showMessageAt($("sign-in-form"), message);
  else setStatus(message, kind);
}

$("toggle-recovery").addEventListener("click", () => setRecoveryMode(!useRecovery));
$("cancel-second-factor").addEventListener("click", () => backToSignIn("Sign-in cancelled."));

listen("second-factor-form", "submit", async (event) => {
  const input = event.target.elements.code;
  const value = input.value.trim();
  input.value = "";
  let step;
  try {
    step = await (useRecovery ? pendingStep.useRecoveryCode(value) : pendingStep.verifyTotp(value));
  } catch (error) {
    // 40100: the temporary token is spent or too many codes were wrong; the sign-in starts over.
    if (error?.code !== 40100) throw error;
    backToSignIn(`${describe(error)}: sign in again.`, "error");
    return;
  }
  await offerPasskeyAfter(step);
  setStatus(useRecovery ? "Signed in with a recovery code; that code is now spent." : "Signed in with two factors.", "ok");
});

// The passkey offer: the sign-in just made is the proof a registration asks for, so no password
// is asked again. "Not now" keeps the offer away from this account for a while, on every device.
listen("passkey-offer-accept", "click", async () => {
  setStatus("Confirm in your browser's prompt to create the passkey.");
  await client.passkeys.register({ label: "This device" });
  $("passkey-offer").hidden = true;
  setStatus("Passkey created: next time, sign in with it. Rename it under Passkeys.", "ok");
  await loadPasskeys();
});

listen("passkey-offer-decline", "click", async () => {
  await client.passkeys.declineOffer();
  $("passkey-offer").hidden = true;
  setStatus("No passkey for now. You can create one any time under Passkeys.", "ok");
});

listen("reload-me", "click", async () => {
  renderAccount(await client.me());
  setStatus("GET /auth/me answered.", "ok");
});

listen("refresh", "click", async () => {
  await client.refresh();
  setStatus("New tokens issued; the previous refresh token is spent.", "ok");
});

listen("logout", "click", async () => {
  await client.logout();
  setStatus("Signed out.", "ok");
});

/**
 * Calls a route through `client.fetch`, which adds the access token and, on 40101, refreshes once
 * (shared with every request under way) and retries: this app's own routes, and the admin routes,
 * which the client has no methods for. `body`, when given, is sent as JSON. Returns the data.
 */
async function appRoute(method, path, body) {
  const init =
    body === undefined ? { method } : { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
  const response = await client.fetch(path, init);
  const envelope = await response.json();
  if (envelope.code !== 0) {
    const retryAfter = Number(response.headers.get("retry-after")) || undefined;
    throw new AuthClientError(envelope.message, {
      kind: "server",
      code: envelope.code,
      status: response.status,
      retryAfter,
      data: envelope.data,
    });
  }
  return envelope.data;
}

listen("load-things", "click", async () => {
  const things = await appRoute("GET", "/api/v1/things");
  $("things").replaceChildren(...things.map(thingItem));
  setStatus(`${counted(things.length, "thing")} loaded.`, "ok");
});

/** One thing: its name, and for an administrator a "Delete" button that asks to be clicked twice. */
function thingItem(thing) {
  const item = element("li", {}, element("span", { className: "row-main", textContent: thing.name }));
  if (!currentUserIsAdmin) return item;
  const remove = element("button", { type: "button", className: "thing-delete danger", textContent: "Delete" });
  item.append(remove);
  listen(remove, "click", async () => {
    if (!confirmedByASecondClick(remove, "Click again to delete")) return;
    await appRoute("DELETE", `/api/v1/things/${encodeURIComponent(thing.id)}`);
    item.remove();
    setStatus(`Deleted "${thing.name}".`, "ok");
  });
  return item;
}

// TOTP enrolment: setup → QR code and secret → first code → enable → recovery codes, shown once.
// Both steps need the current password unless the sign-in is under 5 minutes old: on the server's
// 40001 the client asks the page's dialog for it.
listen(
  "setup-form",
  "submit",
  checkingPassword(async () => {
    const { secret, otpauthUrl } = await client.totp.setup();
    $("secret").textContent = secret;
    $("totp-off").hidden = true;
    $("totp-setup").hidden = false;
    setStatus("Scan the QR code, then enter the code the app shows.");
    await showQrCode(otpauthUrl);
  }),
);

/** Draws the otpauth:// URL, sent in a POST body (never in a URL), and shows the SVG through a blob URL. */
async function showQrCode(otpauthUrl) {
  releaseQr();
  const response = await client.fetch("/demo/qr", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: otpauthUrl }),
  });
  if (!response.ok) {
    showMessageAt($("qr"), "The QR code could not be drawn; type the secret into the app instead.");
    return;
  }
  qrUrl = URL.createObjectURL(new Blob([await response.text()], { type: "image/svg+xml" }));
  $("qr").src = qrUrl;
}

// Enabling ends the user's other sessions and keeps this one; the codes are shown once.
listen(
  "enable-form",
  "submit",
  checkingPassword(async (event) => {
    const { code } = formValues(event.target);
    event.target.reset();
    const { recoveryCodes } = await client.totp.enable({ code: code.trim() });
    releaseQr();
    $("secret").textContent = "";
    $("recovery-code-list").replaceChildren(...recoveryCodes.map((recoveryCode) => element("li", { textContent: recoveryCode })));
    show("recovery-codes");
    setStatus(`Two-step sign-in is on. ${othersSignedOut}`, "ok");
  }),
);

listen("recovery-codes-done", "click", async () => {
  $("recovery-code-list").replaceChildren();
  await renderCurrentUser();
  show("account");
  showAccountSection("security");
  await loadSessions();
});

listen(
  "disable-form",
  "submit",
  checkingPassword(async () => {
    // Every factor (STUP-3): a code and the password, asked in the dialog; a sign-in with both in
    // the last 5 minutes stands for them.
    await withProof("totp.disable", ["password", "totpCode"], (proof) => client.totp.disable(proof));
    await renderCurrentUser();
    setStatus(`Two-step sign-in is off. ${othersSignedOut}`, "ok");
    await loadSessions();
  }),
);

// The password: the current one proves it is the user; the server ends the other sessions.
listen(
  "password-form",
  "submit",
  checkingPassword(async (event) => {
    const { currentPassword, newPassword } = formValues(event.target);
    // With two-step sign-in on, a code too (STUP-3): the dialog asks for it when the server does.
    const { sessionsEnded } = await withProof("account.changePassword", ["totpCode"], ({ totpCode }) =>
      client.account.changePassword({ currentPassword, newPassword, totpCode }),
    );
    event.target.reset();
    setStatus(`Password changed. ${counted(sessionsEnded, "other device")} signed out; this one stays signed in.`, "ok");
    await loadSessions();
  }),
);

/** Lists the user's sessions, this one marked "this device", each with a "Sign out" button. */
async function loadSessions() {
  if (!signedIn) return [];
  const sessions = await client.sessions.list();
  $("session-list").replaceChildren(...sessions.map(sessionItem));
  return sessions;
}

listen("reload-sessions", "click", async () => {
  const sessions = await loadSessions();
  setStatus(`${counted(sessions.length, "session")} signed in.`, "ok");
});

/** How a session signed in, in plain words, from its `amr` ("pwd", "otp"…): "with a password and an app code". */
function signInMethods(amr) {
  const words = {
    pwd: "a password",
    otp: "an app code",
    rc: "a recovery code",
    hwk: "a passkey",
    fed: "a provider",
    ldap: "the directory",
  };
  // "user" says the passkey verified the person (a PIN, a fingerprint): part of "a passkey".
  const methods = amr.filter((method) => method !== "user").map((method) => words[method] ?? method);
  if (methods.length === 0) return "";
  return `with ${methods.length === 1 ? methods[0] : `${methods.slice(0, -1).join(", ")} and ${methods.at(-1)}`}`;
}

/**
 * One session: the device as people name it ("Chrome on Linux", from its User-Agent), its
 * approximate place (from its network address) and when it was last active, how it signed in,
 * and its "Sign out" button. The User-Agent itself is the row's tooltip, for the curious.
 */
function sessionItem(session) {
  const device = deviceName(session.userAgent);
  const active = session.current ? "active now" : `last active ${timeAgo(session.lastUsedAt)}`;
  const details = `${placeName(session.address)} · ${active} · signed in ${timeAgo(session.createdAt)} ${signInMethods(session.amr)}`;
  const actor = session.impersonatedBy
    ? ` · opened by the administrator ${session.impersonatedBy.username ?? session.impersonatedBy.id}`
    : "";
  const end = element("button", { type: "button", className: "session-end danger", textContent: "Sign out" });
  const item = element(
    "li",
    {},
    element("span", { className: `device-icon ${deviceKind(session.userAgent)}`, ariaHidden: "true" }),
    element(
      "span",
      { className: "row-main", title: session.userAgent ?? "" },
      element(
        "span",
        {},
        element("span", { className: "session-device", textContent: device }),
        session.current ? " " : "",
        session.current ? element("span", { className: "badge session-current", textContent: "This device" }) : "",
      ),
      element("span", { className: "hint", textContent: `${details.trim()}${actor}` }),
    ),
    end,
  );
  item.dataset.sessionId = session.id;
  listen(
    end,
    "click",
    checkingPassword(async () => {
      await client.sessions.end(session.id);
      // Ending this device's session signed the client out (signedOut took the page to the sign-in form).
      if (session.current) {
        setStatus("Signed out.", "ok");
        return;
      }
      setStatus(`Signed out ${device}.`, "ok");
      await loadSessions();
    }),
  );
  return item;
}

listen(
  "end-others-form",
  "submit",
  checkingPassword(async () => {
    const { ended } = await client.sessions.endOthers();
    setStatus(`${counted(ended, "other device")} signed out; this one stays signed in.`, "ok");
    await loadSessions();
  }),
);

listen("end-all", "click", async () => {
  if (!confirmedByASecondClick($("end-all"), "Click again to sign out everywhere")) return;
  const { ended } = await client.sessions.endAll();
  setStatus(`Signed out everywhere: ${counted(ended, "session")} ended, this one too.`, "ok");
});

// Organizations (client.orgs): the user's organizations, the active one marked and a switcher; an
// organization's members, its invitations by email (to the outbox) and the pending ones. The
// server decides who may do what (OR-2, OR-4); the page only hides what would be refused.

/** The organization whose members and invitations the page shows: one of the user's, or null. */
let selectedOrganization = null;

/** The roles that administer an organization (the server's default `administratorRoles`). */
const organizationAdministratorRoles = ["owner", "admin"];

/** Whether the user administers `organization` (holds one of its administrator roles there). */
const administers = (organization) => organization.roles.some((role) => organizationAdministratorRoles.includes(role));

/** "owner", "admin, member": roles in plain words. */
const rolesText = (roles) => (roles.length ? roles.join(", ") : "no roles");

/** Whether the page is an invitation's page with its token, waiting to be accepted. */
const invitationWaiting = () => invitationToken !== null;

/** The token of the invitation this page was opened for, until it is accepted or the user leaves the page. */
let invitationToken = null;

/**
 * Lists the user's organizations, the active one (the access token's `org` claim) marked, and
 * shows the members of the one selected. A server without organizations (40400) hides the card.
 */
async function loadOrganizations() {
  if (!signedIn) return [];
  let organizations;
  try {
    organizations = await client.orgs.list();
  } catch (error) {
    if (error?.code !== 40400) throw error;
    $("organizations").hidden = true;
    $("organization-manage").hidden = true;
    $("tab-organizations").hidden = true;
    return [];
  }
  $("organizations").hidden = false;
  $("tab-organizations").hidden = false;
  const active = await client.orgs.active();
  const activeOne = organizations.find((organization) => organization.id === active?.id);
  $("active-organization").textContent = activeOne
    ? `Your active organization: ${activeOne.name} (${rolesText(active.roles)}).`
    : "No active organization: your access token carries none.";
  $("organization-clear").hidden = !active;
  $("organization-none").hidden = organizations.length > 0;
  $("organization-list").replaceChildren(...organizations.map((organization) => organizationItem(organization, active)));
  selectedOrganization =
    organizations.find((organization) => organization.id === selectedOrganization?.id) ?? activeOne ?? organizations[0] ?? null;
  await loadMembers();
  return organizations;
}

/** One organization: its name, slug and the user's roles, "Active" or "Make active", "Members", and "Leave". */
function organizationItem(organization, active) {
  const isActive = organization.id === active?.id;
  const details = ` ${organization.slug} · your roles: ${rolesText(organization.roles)}`;
  const item = element(
    "li",
    {},
    element(
      "span",
      { className: "row-main" },
      element(
        "span",
        {},
        element("strong", { className: "organization-name", textContent: organization.name }),
        isActive ? " " : "",
        isActive ? element("span", { className: "badge organization-active", textContent: "Active" }) : "",
      ),
      element("span", { className: "hint", textContent: details }),
    ),
  );
  item.dataset.orgId = organization.id;
  if (!isActive) {
    const activate = element("button", { type: "button", className: "organization-switch", textContent: "Make active" });
    listen(activate, "click", async () => {
      await switchExplained(organization);
      selectedOrganization = organization;
      await loadOrganizations();
      setStatus(`${organization.name} is now your active organization.`, "ok");
    });
    item.append(activate);
  }
  const manage = element("button", { type: "button", className: "organization-members", textContent: "Members" });
  listen(manage, "click", async () => {
    selectedOrganization = organization;
    await loadMembers();
    $("organization-manage").scrollIntoView({ block: "nearest" });
  });
  const leave = element("button", { type: "button", className: "organization-leave danger", textContent: "Leave" });
  listen(leave, "click", async () => {
    if (!confirmedByASecondClick(leave, "Click again to leave")) return;
    await client.orgs.members.leave(organization.id);
    await loadOrganizations();
    setStatus(`You left ${organization.name}.`, "ok");
  });
  item.append(manage, leave);
  return item;
}

/**
 * Makes `organization` the session's active one, and says in plain words why the server refused:
 * its rules want a second factor the session did not prove (40104), or a way of signing in this
 * session did not use (40300 with the ways it allows).
 */
async function switchExplained(organization) {
  try {
    await client.orgs.switch(organization.id);
  } catch (error) {
    if (error?.code === 40104) {
      const how = error.data?.enrolmentRequired
        ? "turn on two-step sign-in first, then sign out and in again with a code"
        : "sign out and in again with your authenticator app's code";
      throw plainError(`${organization.name} requires a second factor: ${how}`, 40104, 401);
    }
    const ways = error?.data?.signInMethods;
    if (error?.code === 40300 && Array.isArray(ways)) {
      throw plainError(
        `${organization.name} accepts only a sign-in with: ${ways.join(", ")}. Sign out and in again that way`,
        40300,
        403,
      );
    }
    throw error;
  }
}

/** Shows the selected organization's members and, to its administrators, its pending invitations. */
async function loadMembers() {
  const organization = selectedOrganization;
  $("organization-manage").hidden = organization === null;
  if (organization === null) return;
  $("organization-manage-name").textContent = organization.name;
  const { members } = await client.orgs.members.list(organization.id, { limit: 100 });
  $("member-list").replaceChildren(...members.map((member) => memberItem(organization, member)));
  $("organization-admin").hidden = !administers(organization);
  if (administers(organization)) await loadInvitations(organization);
}

/** One member: name, address and roles; for an administrator, a role to give and "Remove" (not for oneself). */
function memberItem(organization, member) {
  const you = member.userId === currentUserId ? " (you)" : "";
  const details = ` ${member.email ?? "no verified address"} · ${rolesText(member.roles)}${you}`;
  const item = element(
    "li",
    {},
    element(
      "span",
      { className: "row-main" },
      element("span", { className: "member-name", textContent: member.username }),
      element("span", { className: "hint", textContent: details }),
    ),
  );
  item.dataset.userId = member.userId;
  if (!administers(organization) || member.userId === currentUserId) return item;
  const select = element(
    "select",
    { name: "role" },
    ...["member", "admin", "owner"].map((role) =>
      element("option", { value: role, textContent: role, selected: member.roles[0] === role }),
    ),
  );
  const change = element("button", { type: "submit", textContent: "Change role" });
  const form = element(
    "form",
    { className: "member-roles" },
    element("label", {}, `Role of ${member.username} `, select),
    change,
  );
  listen(form, "submit", async () => {
    await client.orgs.members.changeRoles(organization.id, member.userId, [select.value]);
    setStatus(`${member.username} is now ${select.value} in ${organization.name}.`, "ok");
    await loadMembers();
  });
  const remove = element("button", { type: "button", className: "member-remove danger", textContent: "Remove" });
  listen(
    remove,
    "click",
    checkingPassword(async () => {
      if (!confirmedByASecondClick(remove, "Click again to remove")) return;
      await client.orgs.members.remove(organization.id, member.userId);
      setStatus(`${member.username} is no longer a member of ${organization.name}.`, "ok");
      await loadMembers();
    }),
  );
  item.append(form, remove);
  return item;
}

/** The organization's pending invitations, newest first, each with "Resend" and "Revoke". */
async function loadInvitations(organization) {
  const invitations = await client.orgs.invitations.list(organization.id);
  $("invitation-none").hidden = invitations.length > 0;
  $("invitation-list").replaceChildren(...invitations.map((invitation) => invitationItem(organization, invitation)));
}

/** One pending invitation: the address, its roles and expiry, "Resend" and "Revoke". */
function invitationItem(organization, invitation) {
  const details = ` ${rolesText(invitation.roles)} · expires ${formatTime(invitation.expiresAt)}`;
  const resend = element("button", { type: "button", className: "invitation-resend", textContent: "Resend" });
  const revoke = element("button", { type: "button", className: "invitation-revoke danger", textContent: "Revoke" });
  const item = element(
    "li",
    {},
    element(
      "span",
      { className: "row-main" },
      element("span", { className: "invitation-email", textContent: invitation.email }),
      element("span", { className: "hint", textContent: details }),
    ),
    resend,
    revoke,
  );
  item.dataset.invitationId = invitation.id;
  listen(resend, "click", async () => {
    await client.orgs.invitations.resend(organization.id, invitation.id);
    setStatus(`A new invitation link is on its way to ${invitation.email}; the previous one no longer works.`, "ok");
    await loadInvitations(organization);
  });
  listen(revoke, "click", async () => {
    if (!confirmedByASecondClick(revoke, "Click again to revoke")) return;
    await client.orgs.invitations.revoke(organization.id, invitation.id);
    setStatus(`The invitation to ${invitation.email} is revoked.`, "ok");
    await loadInvitations(organization);
  });
  return item;
}

listen("reload-organizations", "click", async () => {
  const organizations = await loadOrganizations();
  setStatus(`You belong to ${counted(organizations.length, "organization")}.`, "ok");
});

listen("reload-members", "click", async () => {
  await loadMembers();
  setStatus(`The members of ${selectedOrganization?.name ?? "the organization"} are up to date.`, "ok");
});

listen("organization-clear", "click", async () => {
  await client.orgs.switch(null);
  await loadOrganizations();
  setStatus("No organization is active now.", "ok");
});

listen("organization-create-form", "submit", async (event) => {
  const { name } = formValues(event.target);
  const organization = await client.orgs.create({ name: name.trim() });
  event.target.reset();
  selectedOrganization = organization;
  await loadOrganizations();
  setStatus(`${organization.name} is created; you are its owner. Make it active to work in it.`, "ok");
});

listen("invite-form", "submit", async (event) => {
  const { email, role } = formValues(event.target);
  const invitation = await client.orgs.invitations.create(selectedOrganization.id, { email: email.trim(), roles: [role] });
  event.target.reset();
  setStatus(`An invitation to ${selectedOrganization.name} is on its way to ${invitation.email}: see the outbox.`, "ok");
  await loadInvitations(selectedOrganization);
});

// Accepted by a click, not on load: a mail scanner that opens links and runs their scripts must not
// accept an invitation for anyone. The account must hold the invited address, verified (OR-5).
listen("accept-invitation-button", "click", async () => {
  let organization;
  try {
    organization = await client.orgs.invitations.accept(invitationToken ?? "");
  } catch (error) {
    if (error?.code === 40300) {
      throw plainError("Your account has no verified address: confirm the invited address first", 40300, 403);
    }
    if (error?.code !== 40101 || !signedIn) throw error;
    throw plainError("This invitation is invalid, expired, already used, or for another address: ask for a new one", 40101, 401);
  }
  leaveLinkPage();
  selectedOrganization = organization;
  showAccountSection("organizations");
  await loadOrganizations();
  setStatus(`You joined ${organization.name}. Make it active under Organizations.`, "ok");
});

// Administrators: the users, each with "Disable" or "Enable". The client has no methods for the
// admin routes; the page calls them through client.fetch. The server checks the role itself.
async function loadUsers() {
  const { users } = await appRoute("GET", "/api/v1/auth/admin/users?limit=100");
  $("user-list").replaceChildren(...users.map(userItem));
}

/** One user: name, roles and state, and a button that disables or enables the account (not one's own). */
function userItem(user) {
  const state = `${user.roles.length ? user.roles.join(", ") : "no roles"}${user.disabled ? ", disabled" : ""}`;
  const item = element(
    "li",
    {},
    element(
      "span",
      { className: "row-main" },
      element("span", { className: "user-name", textContent: user.username }),
      element("span", { className: "hint", textContent: ` ${state}${user.id === currentUserId ? " (you)" : ""}` }),
    ),
  );
  item.dataset.userId = user.id;
  if (user.id === currentUserId) return item;
  const toggle = element("button", {
    type: "button",
    className: user.disabled ? "user-toggle" : "user-toggle danger",
    textContent: user.disabled ? "Enable" : "Disable",
  });
  item.append(toggle);
  listen(toggle, "click", async () => {
    const disabled = !user.disabled;
    const path = `/api/v1/auth/admin/users/${encodeURIComponent(user.id)}`;
    await withProof(disabled ? "admin.disable" : "admin.enable", ["password", "totpCode"], (proof) =>
      appRoute("PATCH", path, { disabled, ...proof }),
    );
    setStatus(`${user.username} is ${disabled ? "disabled; their sessions have ended" : "enabled"}.`, "ok");
    await loadUsers();
  });
  return item;
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
    const link = element("a", { href: `http://localhost:${location.port}/` });
    link.textContent = link.href;
    const what = providersListed ? "Passkeys and sign-in with a provider work" : "Passkeys work";
    unavailable.replaceChildren(`${what} only on a domain name: open this page at `, link, ".");
    unavailable.hidden = false;
    return;
  }
  passkeysAvailable = await client.passkeys.enabled().catch(() => false);
  $("passkey-sign-in").hidden = !passkeysAvailable;
  $("passkeys").hidden = !passkeysAvailable;
  passkeyAutofillAvailable = passkeysAvailable && (await browserSupportsWebAuthnAutofill());
  syncPasskeyAutofill();
  const signUp = $("passkey-sign-up");
  signUp.hidden = !(passkeysAvailable && (await servesRoute(passkeySignUpRoute)));
  // Read once the page has decided, by the browser tests too.
  signUp.dataset.offered = String(!signUp.hidden);
}

/** The route of a sign-up with a passkey: the server serves it with sign-up on and passkeys configured. */
const passkeySignUpRoute = "/api/v1/auth/register/public-key/begin";

/** Whether the server's OpenAPI document (the demo turns it on) lists `path`: it lists only the routes that are on. */
async function servesRoute(path) {
  const response = await fetch("/api/v1/auth/openapi.json").catch(() => null);
  const document = response?.ok ? await response.json().catch(() => null) : null;
  return Object.hasOwn(document?.paths ?? {}, path);
}

// Sign up with a passkey: an account with no password, whose way in is the passkey the browser
// creates now. The answer is a sign-in's.
listen("passkey-sign-up-form", "submit", async (event) => {
  const { username, email } = formValues(event.target);
  setStatus("Create a passkey in your browser's prompt.");
  const step = await client.registerWithPasskey({ username, ...(email ? { email } : {}) });
  event.target.reset();
  afterFirstFactor(step, passkeySignUpFactor);
});

// Sign in with a passkey: no username, so the browser offers every passkey it holds for this
// site (a discoverable credential). A complete sign-in, or 40102 as after a password.
listen("passkey-sign-in-button", "click", async () => {
  const button = $("passkey-sign-in-button");
  button.disabled = true;
  setStatus("Choose a passkey in your browser's prompt.");
  stopPasskeyAutofill();
  try {
    await afterFirstFactor(await client.passkeys.signIn(), passkeyFactor);
  } finally {
    button.disabled = false;
    syncPasskeyAutofill();
  }
});

/** Lists the signed-in user's passkeys. */
async function loadPasskeys() {
  if (!passkeysAvailable || !signedIn) return;
  const passkeys = await client.passkeys.list();
  passkeyCount = passkeys.length;
  $("passkey-none").hidden = passkeys.length > 0;
  $("passkey-list").replaceChildren(...passkeys.map(passkeyItem));
}

function formatTime(epochMs) {
  return epochMs === null ? "never" : new Date(epochMs).toLocaleString();
}

const relativeTime = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

/** "just now", "5 minutes ago", "yesterday", "3 weeks ago": how long ago `epochMs` was, as people say it. */
function timeAgo(epochMs) {
  if (epochMs === null) return "never";
  const seconds = Math.round((epochMs - Date.now()) / 1000);
  if (seconds > -60) return "just now";
  for (const [unit, size] of [
    ["year", 31_536_000],
    ["month", 2_592_000],
    ["week", 604_800],
    ["day", 86_400],
    ["hour", 3_600],
    ["minute", 60],
  ]) {
    if (-seconds >= size) return relativeTime.format(Math.round(seconds / size), unit);
  }
  return "just now";
}

/** One passkey: its name and dates, a rename form, and a revoke button that asks to be clicked twice. */
function passkeyItem(passkey) {
  const synced = passkey.backupEligible ? "synced passkey" : "device-bound";
  const dates = ` added ${formatTime(passkey.createdAt)}, last used ${formatTime(passkey.lastUsedAt)}, ${synced}`;
  const input = element("input", { name: "label", maxLength: 64, required: true, value: passkey.label });
  const revoke = element("button", { type: "button", className: "passkey-revoke danger", textContent: "Revoke" });
  const form = element(
    "form",
    { className: "passkey-rename" },
    element("label", {}, "New name ", input),
    element("button", { type: "submit", textContent: "Rename" }),
    revoke,
  );
  listen(form, "submit", async () => {
    const label = input.value;
    await client.passkeys.rename(passkey.id, label);
    await loadPasskeys();
    setStatus(`Passkey "${passkey.label}" renamed to "${label.trim()}".`, "ok");
  });
  listen(
    revoke,
    "click",
    checkingPassword(() => armOrRevoke(revoke, passkey)),
  );
  const item = element(
    "li",
    { className: "stacked" },
    element("strong", { className: "passkey-label", textContent: passkey.label }),
    element("span", { className: "hint", textContent: dates }),
    form,
  );
  item.dataset.passkeyId = passkey.id;
  return item;
}

// Revoking ends the user's other sessions and keeps this one. The browser is then told
// the passkey is gone (WebAuthn's signal API, where it exists), so that the authenticator can
// delete it and stop offering it. Only after a revocation the server confirmed: a failed sign-in
// (40100) says nothing about whether the passkey is known, and must not delete it.
async function armOrRevoke(button, passkey) {
  if (!confirmedByASecondClick(button, "Click again to revoke")) return;
  await client.passkeys.revoke(passkey.id);
  // The demo's rpId is the host it is opened at, "localhost".
  const signal = { signalName: "unknownCredential", rpID: location.hostname, credentialID: passkey.id };
  const forgotten = await sendSignal(signal).then(
    () => true,
    () => false,
  );
  const removal = forgotten ? " Your browser was asked to remove it from the authenticator." : "";
  setStatus(`Passkey "${passkey.label}" revoked.${removal} ${othersSignedOut}`, "ok");
  await loadPasskeys();
  await loadSessions();
}

// Add a passkey: re-authentication (every factor of the account: the password and, with TOTP on,
// a code, from a sign-in under 5 minutes old that proved them, or asked for in the dialog when
// the server wants them), the browser creates the passkey, the server stores it and ends the
// user's other sessions.
listen(
  "passkey-register-form",
  "submit",
  checkingPassword(async (event) => {
    const form = event.target;
    const { label } = formValues(form);
    setStatus("Create the passkey in your browser's prompt.");
    const passkey = await client.passkeys.register({ label });
    form.reset();
    setStatus(`Passkey "${passkey.label}" added. ${othersSignedOut}`, "ok");
    await loadPasskeys();
    await loadSessions();
  }),
);

// Sign in with a provider (OAuth 2.0 / OpenID Connect). The client's oauth.start has the server
// set the HttpOnly cookie that binds the sign-in to this browser, and sends the browser to the
// provider; it comes back to this page at /oauth/<provider>/callback, the redirect URI.

/** The path of this page when a provider sends the browser back: `/oauth/<provider>/callback`. */
const providerCallbackPath = /^\/oauth\/([\w-]+)\/callback$/;

/** Shows a "Sign in with …" button for each provider the server lists, and returns the list. */
async function loadProviders() {
  const providers = await client.oauth.providers().catch(() => []);
  $("provider-buttons").replaceChildren(...providers.map(providerButton));
  showProviderSignIn();
  return providers;
}

/**
 * Shows the provider buttons where there are any, except at an IP address and on an invitation's
 * page: a provider's sign-in leaves the page, and the invitation's token, kept in this page's
 * memory only, would not come back with it.
 */
function showProviderSignIn() {
  $("provider-sign-in").hidden = $("provider-buttons").childElementCount === 0 || openedAtIpAddress || invitationWaiting();
}

/** A button that begins the sign-in with `provider`, to come back to this path. */
function providerButton(provider) {
  const button = element("button", { type: "button", textContent: `Sign in with ${provider.displayName}` });
  listen(button, "click", async () => {
    button.disabled = true;
    setStatus(`Taking you to ${provider.displayName}…`);
    await client.oauth.start(provider.name, { returnPath: location.pathname }).catch((error) => {
      button.disabled = false;
      throw error;
    });
  });
  return button;
}

/**
 * Back from the provider: the client relays its query (code, state and iss, or an error)
 * unchanged to the callback route, with the binding cookie, and replaces the address with the
 * return path the sign-in began with. The answer is taken like a password's: tokens, or the
 * second factor. On a failure the address becomes `/`, where a reload shows the sign-in again.
 */
async function finishProviderSignIn(name, providers) {
  const displayName = providers.find((provider) => provider.name === name)?.displayName ?? name;
  setStatus(`Finishing the sign-in with ${displayName}…`);
  try {
    await afterFirstFactor(await client.oauth.finish({ provider: name }), providerFactor(displayName));
  } catch (error) {
    history.replaceState(null, "", "/");
    // Shown under the provider buttons: the control this sign-in began at.
    showError(error, $("provider-buttons"));
  }
}

// Password reset and the account's address, by email. The server sends the links (here through
// the demo's SMTP server to its outbox, /outbox) to /reset-password#token=… and
// /verify-email#token=…: this page, which reads the token from the fragment (never sent to a
// server, so never in a log or a Referer) and takes it out of the address bar at once.

/** The pages of the links, by path, and the section each shows. */
const linkPages = {
  "/reset-password": "reset-password",
  "/verify-email": "verify-email",
  "/accept-invitation": "accept-invitation",
};

/** The token of the link this page was opened from, read once at load; null on any other page. */
let linkToken = null;

/** Leaves a link's page for the plain address, `/`, and shows the account when signed in, else the sign-in form. */
function leaveLinkPage() {
  linkToken = null;
  invitationToken = null;
  showProviderSignIn();
  history.replaceState(null, "", "/");
  show(signedIn ? "account" : "sign-in");
}

for (const back of document.querySelectorAll(".back-to-sign-in")) {
  back.addEventListener("click", (event) => {
    event.preventDefault();
    leaveLinkPage();
  });
}

$("forgot-link").addEventListener("click", (event) => {
  event.preventDefault();
  $("forgot-sent").hidden = true;
  $("forgot-form").hidden = false;
  show("forgot-password");
  $("forgot-form").elements.account.value = $("sign-in-form").elements.username.value;
  setStatus("");
});

// The server answers the same for every account (PR-1): the page can say no more than it does.
listen("forgot-form", "submit", async (event) => {
  const account = formValues(event.target).account.trim();
  await client.email.forgotPassword(account.includes("@") ? { email: account } : { username: account });
  event.target.reset();
  event.target.hidden = true;
  $("forgot-sent").hidden = false;
  setStatus("Check the outbox for the link.", "ok");
});

/** Whether the reset form asks for the second factor: after the server answered 40103 without one. */
let resetAsksForCode = false;

function askForResetCode() {
  resetAsksForCode = true;
  $("reset-code").hidden = false;
  $("reset-form").elements.code.required = true;
}

// A user with TOTP gives a code too (PR-3): the first try without one is 40103, and the form then
// asks for it. A code of six digits goes as totpCode, anything else as a recovery code.
listen("reset-form", "submit", async (event) => {
  const form = event.target;
  const { newPassword, code } = formValues(form);
  const given = (code ?? "").trim();
  const secondFactor = !resetAsksForCode || !given ? {} : /^\d{6}$/.test(given) ? { totpCode: given } : { recoveryCode: given };
  try {
    await client.email.resetPassword({ token: linkToken ?? "", newPassword, ...secondFactor });
  } catch (error) {
    if (error?.code === 40103 && !resetAsksForCode) {
      askForResetCode();
      form.elements.code.focus();
      throw plainError(
        "This account has two-step sign-in: enter a code from your authenticator app, or a recovery code",
        40103,
        401,
      );
    }
    if (error?.code === 40101) {
      throw plainError("This link is invalid, expired or already used: ask for a new one from the sign-in page", 40101, 401);
    }
    throw error;
  }
  form.reset();
  leaveLinkPage();
  // The reset ended every session of the account, this page's too if it had one.
  if (signedIn) await client.logout().catch(() => undefined);
  setStatus("Your password is set, and every session of the account is signed out. Sign in with the new password.", "ok");
  $("sign-in-form").elements.password.focus();
});

// Confirmed by a click, not on load: a mail scanner that opens links and runs their scripts must
// not verify an address nobody confirmed.
listen("verify-button", "click", async () => {
  try {
    await client.email.verifyEmail({ token: linkToken ?? "" });
  } catch (error) {
    if (error?.code !== 40101) throw error;
    throw plainError("This link is invalid, expired or already used: send a new one from the account page", 40101, 401);
  }
  leaveLinkPage();
  if (signedIn) renderAccount(await client.me());
  setStatus("Your address is confirmed: it is now the account's verified address.", "ok");
});

// A new address: a link goes to it, and the account keeps its address until the link is used.
listen(
  "email-form",
  "submit",
  checkingPassword(async (event) => {
    const { email } = formValues(event.target);
    await client.email.changeEmail({ email: email.trim() });
    event.target.reset();
    setStatus(
      `A confirmation link is on its way to ${email.trim()}: open it from the outbox. Your address changes when it is used.`,
      "ok",
    );
  }),
);

// "Confirm it is you": shown only when the server asks. A change that needs every factor of the
// account (STUP-3: the password and, with TOTP on, a code) went without one, because the sign-in
// is older than 5 minutes or did not prove them all, and the server answered 40001: the client
// (or withProof, for the calls the client does not wrap) asks askToReauthenticate once and sends
// the call again with what the user gave. Or a route of the app wants a more recent or stronger
// sign-in (40104): the client emits stepUpRequired, and the dialog re-authenticates the session.

/** What each change the page may ask a proof for is, in the dialog's words. */
const reauthenticationPurposes = {
  "totp.setup": "set up an authenticator app",
  "totp.enable": "turn on two-step sign-in",
  "totp.disable": "turn off two-step sign-in",
  "account.changePassword": "change your password",
  "passkeys.register": "add a passkey",
  "passkeys.revoke": "remove a passkey",
  "sessions.end": "sign out a device",
  "sessions.endOthers": "sign out your other devices",
  "email.change": "change your address",
  "orgs.remove": "delete the organization",
  "orgs.members.changeRoles": "change a member's role",
  "orgs.members.remove": "remove a member",
  "admin.disable": "disable a user",
  "admin.enable": "enable a user",
};

/** What a cancelled dialog leaves the change with: shown as "Cancelled", never as the server's 40001. */
const cancelledProof = new Error("cancelled");

/** Whether the person cancelled the last step-up dialog: its request's 40104 is shown as "Cancelled" too. */
let stepUpCancelled = false;

/** "your password and a code from your app": the fields `asked` (password, totpCode) in words. */
function proofWords(asked) {
  const words = [asked.password && "your password", asked.totpCode && "a code from your authenticator app"].filter(Boolean);
  return words.join(" and ");
}

/**
 * Opens the "Confirm it is you" dialog: `purpose` says why, `asked` which fields it has
 * (`password`, `totpCode`), `passkey` whether it offers a passkey instead. On "Confirm" it runs
 * `confirm` with what was typed (or `{ passkey: true }`): when that throws, the dialog stays open
 * and says why. Resolves with the answer, or null when cancelled (or already open for another).
 */
function confirmItIsYou({ purpose, asked, passkey, confirm }) {
  const dialog = $("reauthenticate-dialog");
  if (dialog.open) return Promise.resolve(null);
  const form = $("reauthenticate-form");
  form.reset();
  for (const [name, shown] of Object.entries(asked)) {
    form.elements[name].closest("label").hidden = !shown;
    form.elements[name].required = shown;
  }
  $("reauthenticate-purpose").textContent = purpose;
  $("reauthenticate-passkey").hidden = !passkey;
  $("reauthenticate-error").hidden = true;
  dialog.showModal();
  return new Promise((resolve) => {
    const listening = new AbortController();
    const finish = (answer) => {
      listening.abort();
      form.reset();
      dialog.close();
      resolve(answer);
    };
    const attempt = async (answer, button) => {
      button.disabled = true;
      $("reauthenticate-error").hidden = true;
      try {
        await confirm(answer);
        finish(answer);
      } catch (error) {
        $("reauthenticate-error").textContent =
          error?.code === 40100 && !answer.passkey ? "The password is not right." : describe(error);
        $("reauthenticate-error").hidden = false;
      } finally {
        button.disabled = false;
      }
    };
    const { signal } = listening;
    form.addEventListener(
      "submit",
      (event) => {
        event.preventDefault();
        const { password, totpCode } = formValues(form);
        const answer = { ...(asked.password ? { password } : {}), ...(asked.totpCode ? { totpCode: totpCode.trim() } : {}) };
        attempt(answer, event.submitter ?? form.querySelector('button[type="submit"]'));
      },
      { signal },
    );
    $("reauthenticate-passkey-button").addEventListener("click", (event) => attempt({ passkey: true }, event.target), { signal });
    $("reauthenticate-cancel").addEventListener("click", () => finish(null), { signal });
    // Escape closes a modal dialog by itself: that is a cancel too.
    dialog.addEventListener(
      "cancel",
      (event) => {
        event.preventDefault();
        finish(null);
      },
      { signal },
    );
  });
}

/**
 * The client's `reauthenticate` (and withProof's): asks in the dialog for each factor of the
 * account that the change takes, the password when the account has one and a code when TOTP is
 * on, or a passkey instead when the server names it among the account's ways and the user has
 * one. Answers what was given; null when there is nothing to ask; throws `cancelledProof` when the
 * user cancels.
 */
async function askToReauthenticate({ operation, accepts, reauthenticateWith }) {
  const user = await client.currentUser();
  const ways = reauthenticateWith ?? ["password"];
  const asked = {
    password: accepts.includes("password") && ways.includes("password") && (user === null || hasPassword(user)),
    totpCode: accepts.includes("totpCode") && user?.totpEnabled === true,
  };
  const passkey = passkeysAvailable && passkeyCount > 0 && ways.includes("passkey");
  if (!asked.password && !asked.totpCode && !passkey) return null;
  const what = proofWords(asked);
  const how = what ? `enter ${what}` : "confirm with your passkey";
  const answer = await confirmItIsYou({
    purpose: `To ${reauthenticationPurposes[operation] ?? "go on"}, ${how}.`,
    asked,
    passkey,
    confirm: () => undefined,
  });
  if (answer === null) throw cancelledProof;
  return answer;
}

/**
 * Runs `call` with no proof; when the server asks for one (40001), asks in the dialog (as the
 * client does for its own calls) and runs it once more with what was given, or after a passkey
 * re-authenticated the session. For the calls the client sends without re-authentication of its
 * own: turning TOTP off, the password's code, the administrators' changes.
 */
async function withProof(operation, accepts, call) {
  try {
    return await call({});
  } catch (error) {
    if (error?.code !== 40001) throw error;
    const given = await askToReauthenticate({ operation, accepts, reauthenticateWith: error.data?.reauthenticateWith });
    if (!given) throw error;
    if (given.passkey) {
      await client.stepUp.reauthenticateWithPasskey();
      return call({});
    }
    return call(given);
  }
}

/** "5 minutes", "1 hour": a route's `maxAge` in seconds, in words. */
function durationWords(seconds) {
  if (seconds % 3600 === 0) return counted(seconds / 3600, "hour");
  if (seconds % 60 === 0) return counted(seconds / 60, "minute");
  return counted(seconds, "second");
}

// Step-up (40104): a route wants a sign-in more recent than this session's, or a second factor it
// did not prove. The request waits while the dialog re-authenticates the session (a new session
// whose sign-in is now), then is sent again; cancelled, it answers the 40104.
client.on("stepUpRequired", (request) => {
  // The user as last shown: the client's own currentUser() waits for the request that is
  // waiting for this listener.
  const user = shownUser;
  const { maxAge, amr = [] } = request.required;
  const wantsKey = amr.includes("hwk");
  const wantsSecondFactor = amr.some((value) => value !== "pwd");
  const passkey = passkeysAvailable && passkeyCount > 0;
  const asked = {
    password: !wantsKey && user !== null && hasPassword(user),
    totpCode: !wantsKey && user?.totpEnabled === true,
  };
  if (!asked.password) asked.totpCode = false;
  // Nothing to ask (an account without a password or a passkey): the request answers at once.
  if (!asked.password && !passkey) {
    request.cancel();
    return;
  }
  const why = wantsSecondFactor
    ? "This needs two-step sign-in"
    : `This needs a sign-in from the last ${durationWords(maxAge ?? 300)}`;
  const how = asked.password ? `enter ${proofWords(asked)}` : "confirm with your passkey";
  confirmItIsYou({
    purpose: `${why}: ${how}.`,
    asked,
    passkey,
    confirm: (given) => (given.passkey ? request.reauthenticateWithPasskey() : request.reauthenticate(given)),
  }).then((answer) => {
    if (answer !== null) return;
    stepUpCancelled = true;
    request.cancel();
  });
});

/** On a link's page: keeps the token from the fragment, takes it out of the address bar, and shows the page's form. */
function openLinkPage() {
  const section = linkPages[location.pathname];
  if (!section) return;
  linkToken = tokenFromLink(location.hash);
  history.replaceState(null, "", location.pathname);
  if (!linkToken) {
    show(section);
    setStatus("This page needs the link from the email, with its #token=…; open the link again.", "error");
    return;
  }
  if (section === "accept-invitation") invitationToken = linkToken;
  // An invitation is accepted by a signed-in account (OR-5): first the sign-in, then the invitation.
  if (section === "accept-invitation" && !signedIn) {
    show("sign-in");
    setStatus("Sign in with the invited account to accept the invitation.");
    return;
  }
  show(section);
}

/** Sets up the sign-in choices, then finishes a provider's sign-in when the page is its callback, or shows a link's page. */
async function startPage() {
  openLinkPage();
  const providers = await loadProviders();
  await loadPasskeyConfig(providers.length > 0);
  const returning = providerCallbackPath.exec(location.pathname);
  if (returning) await finishProviderSignIn(returning[1], providers);
}

startPage().catch(showError);
