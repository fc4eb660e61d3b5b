// The API reference page: Swagger UI (swagger-ui-dist, served by the demo from node_modules) on the
// OpenAPI document the auth serves. No validator badge: it would send the document to a third party.
window.SwaggerUIBundle({
  url: "/api/v1/auth/openapi.json",
  dom_id: "#viewer",
  deepLinking: true,
  validatorUrl: null,
  defaultModelsExpandDepth: 0,
  docExpansion: "list",
  tryItOutEnabled: false,
});
