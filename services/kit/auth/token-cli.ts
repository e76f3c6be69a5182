// npm run token -- --kind service --svc tips --caps a,b [--sub usr_x] [--app-id x] [--fp]
//   [--project-id p] [--env production|sandbox] [--ns a,b] [--mod m] [--aud a[,b]] [--ttl seconds]
import { parseArgs } from "node:util";
import { loadConfig } from "../runtime/config.js";
import { loadKeys } from "./keys.js";
import { MAX_LIFETIME_SECONDS, mintToken, type TokenKind } from "./tokens.js";

const hours = (kind: TokenKind) => MAX_LIFETIME_SECONDS[kind] / 3600;

const USAGE = `Prints a platform token signed with the platform key (PF_JWT_PRIVATE_KEY, or the dev key under PF_DATA_DIR).

usage: npm run -s token -- --kind user|app|service [options]
  --kind k          user, app or service (required)
  --sub s           usr_… or gst_… for people (required for --kind user)
  --svc key         the service of a service token (required for --kind service)
  --app-id id       the app of an app token (required for --kind app)
  --caps a,b        capabilities granted
  --fp              a first-party app
  --project-id p    --env production|sandbox    --ns a,b    --mod m
  --aud a[,b]       the audience (default pf); a service that declares its own (codes) takes only
                    tokens for it, the others only pf; several, comma-separated, for both
  --ttl seconds     lifetime (default 3600; at most ${hours("user")} h for user, ${hours("service")} h for service,
                    ${hours("app") / 24} days for app tokens)
Combinations the platform would refuse (a --sub that does not fit the kind, a longer --ttl) are refused here.
  --help            this text`;

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      help: { type: "boolean", short: "h", default: false },
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
      aud: { type: "string" },
      ttl: { type: "string", default: "3600" },
    },
  }));
} catch (error) {
  fail((error as Error).message);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const kind = values.kind as TokenKind | undefined;
if (kind !== "user" && kind !== "app" && kind !== "service") fail("--kind must be user, app or service.");
const ttl = Number(values.ttl);
if (!Number.isInteger(ttl) || ttl <= 0) fail("--ttl must be a whole number of seconds.");
const list = (value: string | undefined) =>
  (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
try {
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
    aud: values.aud === undefined ? undefined : list(values.aud),
    ttl,
  });
  console.log(token);
} catch (error) {
  fail((error as Error).message);
}
