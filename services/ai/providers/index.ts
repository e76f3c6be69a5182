import { anthropicProvider } from "./anthropic.js";
import { localProvider } from "./local/index.js";
import { openaiProvider } from "./openai.js";
import type { ModelProvider, ProviderConfig } from "./provider.js";

/** The adapter speaking a provider's wire format. */
export function adapterOf(config: ProviderConfig): ModelProvider {
  switch (config.kind) {
    case "local":
      return localProvider;
    case "openai":
      return openaiProvider(config);
    case "anthropic":
      return anthropicProvider(config);
  }
}
