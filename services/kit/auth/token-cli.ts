// npm run token -- --kind service --svc tips --caps a,b [--sub usr_x] [--app-id x] [--fp]
//   [--project-id p] [--env production|sandbox] [--ns a,b] [--mod m] [--ttl seconds]
import { parseArgs } from "node:util";
import { loadConfig } from "../config.js";
import { loadKeys } from "./keys.js";
import { mintToken, type TokenKind } from "./tokens.js";

const { values } = parseArgs({
  options: {
    kind: { type: "string" },
    svc: { type: "string" },
    caps: { type: "string", default: "" },
    sub: { type: "string" },
    "app-id": { type: "string" },
    fp: { type: "boolean", default: false },
    "project-id": { type: "string" },
    env: { type: "string" },
    ns: { type: "string" },
    mod: { type: "string" },
    ttl: { type: "string", default: "3600" },
  },
});

const kind = values.kind as TokenKind | undefined;
if (kind !== "user" && kind !== "app" && kind !== "service") {
  console.error("usage: npm run token -- --kind user|app|service [--svc key] [--caps a,b] [--sub usr_x] [--app-id id] [--fp] [--project-id p] [--env production|sandbox] [--ns a,b] [--mod m] [--ttl s]");
  process.exit(2);
}
const list = (value: string | undefined) => (value ?? "").split(",").map((s) => s.trim()).filter(Boolean);
const keys = await loadKeys(loadConfig());
const token = await mintToken(keys, {
  kind,
  svc: values.svc,
  sub: values.sub,
  caps: list(values.caps),
  fp: values.fp || undefined,
  app_id: values["app-id"],
  project_id: values["project-id"],
  env: values.env as "production" | "sandbox" | undefined,
  ns: values.ns ? list(values.ns) : undefined,
  mod: values.mod,
  ttl: Number(values.ttl),
});
console.log(token);
