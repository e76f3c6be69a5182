import type { ConnectError } from "@connectrpc/connect";
import { invalid, problem } from "../../kit/handler/problem.js";
import { SECRET_ENV_PREFIX } from "../settings.js";

/**
 * A provider's secret is only ever the name of one of this service's own variables (PF_AI_…): never a value, and
 * never another service's secret (a manage caller could otherwise point a provider at its own host with
 * PF_JWT_PRIVATE_KEY as the "API key"). Refusals never repeat what was sent.
 */
const ENV_NAME = new RegExp(`^${SECRET_ENV_PREFIX}[A-Z0-9_]{1,100}$`);
const LONGEST_NAME = SECRET_ENV_PREFIX.length + 100;
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
// Base64 (or hex) with no underscore: no PF_AI_ name is 20 characters without one.
const BLOB = /^[A-Za-z0-9+/]{20,}={0,2}$/;

/** Whether an api_key_env is a key itself rather than a variable's name. */
export function looksLikeSecretValue(text: string): boolean {
  return (
    /^sk[-_]/i.test(text) ||
    /[a-z-]/.test(text) ||
    /\s/.test(text) ||
    text.length > LONGEST_NAME ||
    JWT.test(text) ||
    BLOB.test(text)
  );
}

/** 400 ai.secret_value_refused for `field`: what was sent stays unsaid. */
export function secretValueRefused(field: string): ConnectError {
  return problem(
    400,
    "ai.secret_value_refused",
    `${field} looks like a secret's value: a provider's key is only named, as an environment variable ${SECRET_ENV_PREFIX}… in api_key_env.`,
    { field },
  );
}

/**
 * Checks what a provider request says about its secret: any api_key is refused (its value is never stored or
 * echoed); api_key_env is "" (none) or a PF_AI_… name.
 */
export function checkSecretReference(request: { apiKey: string; apiKeyEnv?: string }): void {
  if (request.apiKey !== "") throw secretValueRefused("api_key");
  const name = request.apiKeyEnv;
  if (name === undefined || name === "") return;
  if (looksLikeSecretValue(name)) throw secretValueRefused("api_key_env");
  if (!ENV_NAME.test(name))
    throw problem(
      400,
      "ai.secret_env_refused",
      `api_key_env ${name} is not one this service reads keys from: name a variable ${SECRET_ENV_PREFIX}[A-Z0-9_]+.`,
      { field: "api_key_env" },
    );
}

/** The base URL a provider of a kind uses when registered without one. */
const DEFAULT_BASE_URLS: Record<string, string> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com/v1",
  local: "",
};

const isLoopback = (hostname: string) =>
  hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);

/**
 * The base URL a provider of `kind` may call, as stored (its parsed form: what was checked is what is called), or
 * its kind's default when none is given. `local` takes none; others must be https (http only to a loopback host),
 * carry no credentials, query or fragment, and name a host listed in PF_AI_PROVIDER_HOSTS (`host` allows any
 * port of it, `host:port` that port only).
 */
export function checkedBaseUrl(kind: string, baseUrl: string | undefined, hosts: readonly string[]): string {
  if (kind === "local") {
    if (baseUrl) throw invalid("base_url", "A local provider calls no API: it takes no base_url.");
    return "";
  }
  const given = baseUrl || DEFAULT_BASE_URLS[kind] || "";
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw invalid("base_url", "base_url is not an absolute URL.");
  }
  if (url.username !== "" || url.password !== "") throw secretValueRefused("base_url");
  if (url.search !== "" || url.hash !== "") throw invalid("base_url", "base_url takes no query or fragment.");
  if (url.protocol !== "https:" && url.protocol !== "http:") throw invalid("base_url", "base_url must be https.");
  const hostname = url.hostname.toLowerCase();
  const host = url.host.toLowerCase();
  if (url.protocol === "http:" && !isLoopback(hostname))
    throw problem(400, "ai.provider_host_refused", `base_url must be https (http only to a loopback host).`, {
      field: "base_url",
      host,
    });
  if (!hosts.includes(hostname) && !hosts.includes(host))
    throw problem(
      400,
      "ai.provider_host_refused",
      `The host ${host} is not one providers may call (PF_AI_PROVIDER_HOSTS).`,
      { field: "base_url", host },
    );
  return url.href.replace(/\/+$/, "");
}
