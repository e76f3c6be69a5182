import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseAllDocuments, parse } from "yaml";

/**
 * The part of Kustomize deploy/kubernetes uses, to render it offline: resources (files and folders), namespace,
 * images, patches (strategic merge, by kind and name), and secretGenerator from env files. Anything else in a
 * kustomization is refused, so a manifest never relies on what this does not render.
 */

export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

interface Kustomization {
  resources?: string[];
  namespace?: string;
  images?: { name: string; newName?: string; newTag?: string }[];
  patches?: { path: string }[];
  secretGenerator?: { name: string; envs: string[] }[];
  generatorOptions?: { disableNameSuffixHash: boolean };
}

const KNOWN = new Set([
  "apiVersion",
  "kind",
  "resources",
  "namespace",
  "images",
  "patches",
  "secretGenerator",
  "generatorOptions",
]);
/** Kinds that live outside any namespace. */
const CLUSTER_WIDE = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume", "StorageClass"]);

/** Renders the kustomization in `folder`: its objects, as `kustomize build` would print them. */
export async function render(folder: string): Promise<KubernetesObject[]> {
  const kustomization = parse(await readFile(join(folder, "kustomization.yaml"), "utf8")) as Kustomization;
  const unknown = Object.keys(kustomization).filter((key) => !KNOWN.has(key));
  if (unknown.length) throw new Error(`${folder}: this renderer does not do ${unknown.join(", ")}`);
  if (kustomization.secretGenerator && !kustomization.generatorOptions?.disableNameSuffixHash)
    throw new Error(`${folder}: generated names are kept as written (disableNameSuffixHash: true)`);
  const objects: KubernetesObject[] = [];
  for (const resource of kustomization.resources ?? []) {
    const path = join(folder, resource);
    if (existsSync(join(path, "kustomization.yaml"))) objects.push(...(await render(path)));
    else objects.push(...parseAllDocuments(await readFile(path, "utf8")).map((doc) => doc.toJS() as KubernetesObject));
  }
  for (const generator of kustomization.secretGenerator ?? []) {
    const data: Record<string, string> = {};
    for (const file of generator.envs)
      for (const line of (await readFile(join(folder, file), "utf8")).split("\n")) {
        const pair = /^([A-Za-z_][\w.-]*)=(.*)$/.exec(line.trim());
        if (pair) data[pair[1]] = Buffer.from(pair[2]).toString("base64");
      }
    objects.push({ apiVersion: "v1", kind: "Secret", metadata: { name: generator.name }, type: "Opaque", data });
  }
  for (const { path } of kustomization.patches ?? []) {
    const patch = parse(await readFile(join(folder, path), "utf8")) as KubernetesObject;
    const target = objects.find((o) => o.kind === patch.kind && o.metadata.name === patch.metadata.name);
    if (!target) throw new Error(`${folder}/${path}: no ${patch.kind} ${patch.metadata.name} to patch`);
    Object.assign(target, merge(target, patch));
  }
  for (const object of objects) {
    if (kustomization.namespace && !CLUSTER_WIDE.has(object.kind)) object.metadata.namespace = kustomization.namespace;
    for (const image of kustomization.images ?? []) retag(object, image);
  }
  return objects;
}

/** Strategic merge: maps merged key by key, lists of named items (containers, env, ports) by name, others replaced. */
function merge(base: unknown, patch: unknown): unknown {
  if (Array.isArray(base) && Array.isArray(patch) && patch.every((item) => isNamed(item))) {
    const merged = base.map((item) => {
      const over = isNamed(item) ? patch.find((candidate) => candidate.name === item.name) : undefined;
      return over ? merge(item, over) : item;
    });
    return [
      ...merged,
      ...patch.filter((item) => !base.some((candidate) => isNamed(candidate) && candidate.name === item.name)),
    ];
  }
  if (isMap(base) && isMap(patch)) {
    const merged: Record<string, unknown> = { ...base };
    for (const [key, value] of Object.entries(patch)) merged[key] = key in base ? merge(base[key], value) : value;
    return merged;
  }
  return patch;
}

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isNamed = (value: unknown): value is { name: string } => isMap(value) && typeof value.name === "string";

/** Kustomize's images: every container (and init container) of that image name gets the new name and tag. */
function retag(object: KubernetesObject, image: { name: string; newName?: string; newTag?: string }): void {
  const spec = (object.spec as { template?: { spec?: Record<string, { image: string }[] | undefined> } } | undefined)
    ?.template?.spec;
  for (const container of [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])]) {
    const [name, tag] = container.image.split(":");
    if (name !== image.name) continue;
    container.image = `${image.newName ?? name}${(image.newTag ?? tag) ? `:${image.newTag ?? tag}` : ""}`;
  }
}
