// The module the demo page imports, served as one minified script at /vendor/portcullis-client.js
// (bundled by page-client-bundle.ts): @portcullis/client, and the helpers of
// @simplewebauthn/browser the page uses beside it, from the same copy the client bundles.
export { AuthClientError, createAuthClient, tokenFromLink } from "@portcullis/client";
export { browserSupportsWebAuthn, browserSupportsWebAuthnAutofill, sendSignal } from "@simplewebauthn/browser";
