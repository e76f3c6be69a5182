import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { PRODUCTION_SETTINGS } from "../../services/kit/runtime/config.js";
import { ROOT } from "./image.js";
import { render, type KubernetesObject } from "./kustomize.js";

/**
 * deploy/kubernetes rendered offline (base and the production overlay) and every object validated against the
 * Kubernetes schemas (kubernetes-models); then what the deployment promises: a Deployment per process group running
 * compose.yaml's split, probes on /healthz and /readyz, requests, a PodDisruptionBudget, a CPU autoscaler, the
 * shared keys in a Secret, and the RPC port reachable from the platform's own pods only.
 */

interface Container {
  name: string;
  image: string;
  command?: string[];
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports: { name: string; containerPort: number }[];
  livenessProbe?: { httpGet: { path: string; port: string } };
  readinessProbe?: { httpGet: { path: string; port: string } };
  resources?: { requests?: { cpu?: string; memory?: string }; limits?: { memory?: string } };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean };
}
interface Deployment extends KubernetesObject {
  spec: {
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: { containers: Container[]; securityContext?: { runAsNonRoot?: boolean } };
    };
  };
}
type Selecting = KubernetesObject & {
  spec: { selector?: unknown; podSelector?: { matchLabels: Record<string, string> } };
};

const BASE = join(ROOT, "deploy/kubernetes/base");
const PRODUCTION = join(ROOT, "deploy/kubernetes/overlays/production");

/** Validates one object against its kind's schema; throws naming what does not hold. */
async function validate(object: KubernetesObject): Promise<void> {
  const models = (await import(/* @vite-ignore */ `kubernetes-models/${object.apiVersion}/${object.kind}`)) as Record<
    string,
    new (data: unknown) => { validate(): void }
  >;
  new models[object.kind](object).validate();
}

const byKind = <T extends KubernetesObject>(objects: KubernetesObject[], kind: string) =>
  objects.filter((object) => object.kind === kind) as T[];
const envOf = (container: Container) =>
  Object.fromEntries((container.env ?? []).map(({ name, value }) => [name, value]));
const selects = (labels: Record<string, string>, selector: Record<string, string>) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);

describe.each([
  ["base", BASE],
  ["overlays/production", PRODUCTION],
])("deploy/kubernetes/%s", (_name, folder) => {
  it("renders, and every object is valid against the Kubernetes schemas", async () => {
    const objects = await render(folder);
    expect(objects.length).toBeGreaterThan(15);
    for (const object of objects)
      await expect(validate(object), `${object.kind} ${object.metadata.name}`).resolves.toBeUndefined();
  });

  it("runs compose.yaml's three process groups, one Deployment each, with probes, requests and no root", async () => {
    const objects = await render(folder);
    const compose = parse(await readFile(join(ROOT, "compose.yaml"), "utf8"), { merge: true }) as {
      services: Record<string, { environment?: Record<string, string> }>;
    };
    const deployments = byKind<Deployment>(objects, "Deployment");
    expect(deployments.map((deployment) => deployment.metadata.name).sort()).toEqual([
      "pf-gateway",
      "pf-ledger",
      "pf-workers",
    ]);
    for (const deployment of deployments) {
      const group = deployment.metadata.name.replace(/^pf-/, "");
      const { spec } = deployment.spec.template;
      const [container] = spec.containers;
      expect(selects(deployment.spec.template.metadata.labels, deployment.spec.selector.matchLabels)).toBe(true);
      expect(envOf(container).PF_SERVICES, group).toBe(compose.services[group].environment?.PF_SERVICES);
      expect(container.command).toEqual(["node", "dist/main.js"]);
      expect(container.livenessProbe?.httpGet).toEqual({ path: "/healthz", port: "http" });
      expect(container.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: "http" });
      expect(container.ports.find((port) => port.name === "http")?.containerPort).toBe(8080);
      expect(container.resources?.requests?.cpu).toBeDefined();
      expect(container.resources?.requests?.memory).toBeDefined();
      expect(container.resources?.limits?.memory).toBeDefined();
      expect(spec.securityContext?.runAsNonRoot).toBe(true);
      expect(container.securityContext).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
      });
    }
  });

  it("gives each group a Service, a PodDisruptionBudget and a CPU autoscaler", async () => {
    const objects = await render(folder);
    for (const deployment of byKind<Deployment>(objects, "Deployment")) {
      const labels = deployment.spec.template.metadata.labels;
      const { name } = deployment.metadata;
      const service = byKind<Selecting>(objects, "Service").find((candidate) => candidate.metadata.name === name);
      expect(selects(labels, service?.spec.selector as Record<string, string>), `${name}: Service`).toBe(true);
      const budget = byKind<Selecting>(objects, "PodDisruptionBudget").find(
        (candidate) => candidate.metadata.name === name,
      );
      expect(selects(labels, (budget?.spec.selector as { matchLabels: Record<string, string> }).matchLabels)).toBe(
        true,
      );
      const scaler = objects.find(
        (object) => object.kind === "HorizontalPodAutoscaler" && object.metadata.name === name,
      ) as
        | (KubernetesObject & { spec: { scaleTargetRef: { name: string }; minReplicas: number; metrics: unknown[] } })
        | undefined;
      expect(scaler?.spec.scaleTargetRef.name).toBe(name);
      expect(scaler?.spec.minReplicas).toBeGreaterThanOrEqual(2);
      expect(scaler?.spec.metrics).toEqual([
        { type: "Resource", resource: { name: "cpu", target: expect.objectContaining({ type: "Utilization" }) } },
      ]);
    }
  });

  it("reaches every service a group does not run at a Service's RPC port", async () => {
    const objects = await render(folder);
    const deployments = byKind<Deployment>(objects, "Deployment");
    const runs = new Map(
      deployments.map((deployment) => [
        deployment.metadata.name,
        envOf(deployment.spec.template.spec.containers[0]).PF_SERVICES!.split(","),
      ]),
    );
    for (const deployment of deployments) {
      for (const [setting, url] of Object.entries(envOf(deployment.spec.template.spec.containers[0]))) {
        const key = /^PF_([A-Z]+)_URL$/.exec(setting)?.[1]?.toLowerCase();
        if (!key) continue;
        const { hostname, port } = new URL(url!);
        expect(runs.get(hostname), `${setting} of ${deployment.metadata.name}`).toContain(key);
        const service = objects.find((object) => object.kind === "Service" && object.metadata.name === hostname) as
          (KubernetesObject & { spec: { ports: { name: string; port: number }[] } }) | undefined;
        expect(service?.spec.ports).toContainEqual(expect.objectContaining({ name: "rpc", port: Number(port) }));
      }
    }
  });

  it("keeps the RPC port internal: only the platform's own pods may reach it", async () => {
    const objects = await render(folder);
    type Policy = KubernetesObject & {
      spec: {
        podSelector: { matchLabels: Record<string, string> };
        policyTypes: string[];
        ingress: {
          from?: {
            podSelector?: { matchLabels: Record<string, string> };
            namespaceSelector?: unknown;
            ipBlock?: unknown;
          }[];
          ports?: { port: string }[];
        }[];
      };
    };
    const policies = byKind<Policy>(objects, "NetworkPolicy");
    for (const deployment of byKind<Deployment>(objects, "Deployment")) {
      const labels = deployment.spec.template.metadata.labels;
      const own = policies.filter((policy) => selects(labels, policy.spec.podSelector.matchLabels));
      expect(own, deployment.metadata.name).toHaveLength(1);
      expect(own[0].spec.policyTypes).toContain("Ingress");
      const rpc = own[0].spec.ingress.filter((rule) => !rule.ports || rule.ports.some((port) => port.port === "rpc"));
      expect(rpc).toHaveLength(1);
      expect(rpc[0].from).toEqual([{ podSelector: { matchLabels: { "app.kubernetes.io/part-of": "pf" } } }]);
    }
  });
});

describe("deploy/kubernetes/overlays/production", () => {
  it("holds every setting production needs in the shared ConfigMap or the Secret every container reads", async () => {
    const objects = await render(PRODUCTION);
    for (const deployment of byKind<Deployment>(objects, "Deployment")) {
      const from = deployment.spec.template.spec.containers[0].envFrom ?? [];
      const keys = from.flatMap((source) => {
        const name = source.configMapRef?.name ?? source.secretRef?.name;
        const object = objects.find(
          (candidate) =>
            candidate.metadata.name === name && candidate.kind === (source.secretRef ? "Secret" : "ConfigMap"),
        );
        return Object.keys(((object as { data?: object } | undefined)?.data ?? {}) as object);
      });
      for (const setting of [...PRODUCTION_SETTINGS, "PF_ENV"])
        expect(keys, deployment.metadata.name).toContain(setting);
    }
  });

  it("puts everything in its namespace, runs the registry's image and patches the base", async () => {
    const objects = await render(PRODUCTION);
    expect(new Set(objects.map((object) => object.metadata.namespace))).toEqual(new Set(["pf"]));
    for (const deployment of byKind<Deployment>(objects, "Deployment"))
      expect(deployment.spec.template.spec.containers[0].image).toBe("registry.example.com/pf/platform:0.1.0");
    const config = objects.find((object) => object.kind === "ConfigMap") as KubernetesObject & {
      data: Record<string, string>;
    };
    expect(config.data).toMatchObject({ PF_ENV: "production", NATS_URL: "nats://nats.pf-infra.svc:4222" });
    // The repository holds no key: each is left empty, which PF_ENV=production refuses to start with.
    const secret = objects.find((object) => object.kind === "Secret") as KubernetesObject & {
      data: Record<string, string>;
    };
    expect(Object.values(secret.data).every((value) => value === "")).toBe(true);
  });
});
