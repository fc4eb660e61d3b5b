// The module the demo page imports, served as one minified script at /vendor/portcullis-client.js
// (bundled by page-client-bundle.ts): @portcullis/client, the helpers of @simplewebauthn/browser
// the page uses beside it (from the same copy the client bundles), and the session list's names
// for devices and places (device-names.ts, on Bowser).
export { AuthClientError, createAuthClient, tokenFromLink } from "@portcullis/client";
export { browserSupportsWebAuthn, browserSupportsWebAuthnAutofill, sendSignal } from "@simplewebauthn/browser";
export { deviceKind, deviceName, placeName } from "./device-names.js";
