import { createAuthClient } from "@portcullis/client";
import { AuthProvider } from "@portcullis/react";
import { createRoot } from "react-dom/client";
import { App } from "./App.js";

const client = createAuthClient({ baseUrl: "/api/v1" });
const root = document.getElementById("root");
if (root)
  createRoot(root).render(
    <AuthProvider client={client}>
      <App />
    </AuthProvider>,
  );
