import { describe, expect, it } from "vitest";
import { services } from "../../clients/ts/src/services.js";
import { modules } from "../../platform/registry.js";

describe("the client package's services", () => {
  it("are every proto service the platform serves", () => {
    const served = modules.flatMap((module) => module.protos).map((service) => service.typeName);
    expect(Object.values(services).map((service) => service.typeName)).toEqual(expect.arrayContaining(served));
    expect(Object.values(services)).toHaveLength(served.length);
  });

  it("are named by their service's name less `Service`, in lower camel case", () => {
    for (const [name, service] of Object.entries(services)) {
      const local = service.name.replace(/Service$/, "");
      expect(name).toBe(local[0].toLowerCase() + local.slice(1));
    }
  });
});
