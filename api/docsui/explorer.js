// Swagger UI over this service's own document. Loaded as a file rather than
// inline so that the page's Content-Security-Policy can forbid inline script.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/api/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    // The pasted key survives a reload of the page (kept in localStorage).
    persistAuthorization: true,
    // The default sends the document to a public validator: never offline.
    validatorUrl: null,
    displayRequestDuration: true,
    filter: true,
    tryItOutEnabled: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout"
  });
});
