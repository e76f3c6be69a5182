import { getOption } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { BotService } from "../../gen/pf/bot/v1/bot_pb.js";
import { BotLinkService } from "../../gen/pf/bot/v1/link_service_pb.js";
import { Actor, designed as designedOption } from "../../gen/pf/v1/options_pb.js";
import { problemOf } from "../../services/kit/handler/problem.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  OUTSIDER,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { pairDevice } from "../support/device.js";
import { usePlatform } from "../support/platform.js";
import { botCall, dispatchBody, managerToken, robotOf } from "./support.js";
import { forged } from "../support/callers.js";

/** The robots the matrix calls: usr_a1 owns them, the matrix's outsider is only in their queue. */
const fixture = { robot: "", doomed: "", device: "" };

/** A call whose path names the fixture, read when the test runs. */
const at = (method: string, path: () => string, body?: unknown): RouteCall => ({
  method,
  get path() {
    return `/bot/api/v1${path()}`;
  },
  body,
});

/** One valid call per HTTP route (the device link and /control are WebSockets: their refusals are below). */
const calls: Record<string, RouteCall> = {
  revokeDevice: at("POST", () => `/devices/${fixture.device}/revoke`, { reason: "lost" }),
  rotateDevice: at("POST", () => `/devices/${fixture.device}/rotate`, {}),
  dispatchJob: at("POST", () => "/jobs", dispatchBody({ id: "job_matrix1", node_id: fixture.device })),
  getJob: at("GET", () => "/jobs/job_matrix1"),
  cancelJob: at("POST", () => "/jobs/job_matrix1/cancel", {}),
  listRobots: at("GET", () => "/robots?owner=usr_a1"),
  createRobot: at("POST", () => "/robots", { name: "Rover" }),
  getRobot: at("GET", () => `/robots/${fixture.robot}`),
  updateRobot: at("PATCH", () => `/robots/${fixture.robot}`, { name: "Rover 2" }),
  deleteRobot: at("DELETE", () => `/robots/${fixture.doomed}`),
  listRobotAudit: at("GET", () => `/robots/${fixture.robot}/audit`),
  listRobotDevices: at("GET", () => `/robots/${fixture.robot}/devices`),
  latchEstop: at("POST", () => `/robots/${fixture.robot}/estop`),
  issuePairingCode: at("POST", () => `/robots/${fixture.robot}/pairing-code`),
  clearEstop: at("DELETE", () => `/robots/${fixture.robot}/estop`),
  pairDevice: at("POST", () => "/devices/pair", { code: "AAAA-BBBB-CCCC-DDDD" }),
};

const http = [...routesOf(BotService), ...routesOf(BotLinkService).filter((route) => route.name === "pairDevice")];
const t = usePlatform({ services: ["bot"] });

beforeAll(async () => {
  const queued = { operators: [{ subject: OUTSIDER, role: "queue" }] };
  const robot = await robotOf(t, "usr_a1", queued);
  fixture.robot = robot.id;
  fixture.device = (await pairDevice(t, robot.code)).deviceId;
  fixture.doomed = (await robotOf(t, "usr_a1", queued)).id;
});

describe("every bot route", () => {
  it("has a call here, or a test of its own below (the device link and /control: 18 routes)", () => {
    const all = [...routesOf(BotService), ...routesOf(BotLinkService)].map((route) => route.name);
    expect(all).toHaveLength(18);
    expect([...Object.keys(calls), "link", "control"].sort()).toEqual(all.sort());
  });

  itWithSpec("matches routes.tsv where documented; the other 5 are marked designed", "bot", (documented) => {
    expect(documented).toHaveLength(13);
    const routes = [...routesOf(BotService), ...routesOf(BotLinkService)];
    const bound = routes.map((route) => ({ route, binding: bindingOf(route) }));
    for (const [, verb, path, caps, visibility] of documented) {
      const found = bound.find(({ binding }) => binding.verb === verb && binding.template === path);
      expect(found, `${verb} ${path}`).toBeDefined();
      expect(found!.binding.visibility, `${verb} ${path}`).toBe(visibility);
      // The e-stop: "needs read and control capabilities" (the spec's rule 4), so it holds both.
      if (found!.route.name === "latchEstop")
        expect(found!.route.rule.allCapabilities).toEqual([caps, "bot.robot.read"]);
      else expect(found!.binding.caps, `${verb} ${path}`).toBe(caps);
    }
    const designed = bound.filter(
      ({ binding }) => !documented.some(([, verb, path]) => verb === binding.verb && path === binding.template),
    );
    expect(designed.map(({ route }) => route.name).sort()).toEqual([
      "clearEstop",
      "control",
      "issuePairingCode",
      "link",
      "pairDevice",
    ]);
    for (const { route } of bound)
      expect(getOption(route.method, designedOption), route.name).toBe(designed.some((d) => d.route === route));
  });
});

describe("whom each bot route admits, as declared", () => {
  it("dispatch: internal, run's service token only, never to apps or mods, never for a person", () => {
    for (const route of routesOf(BotService).filter((each) => /Job$/.test(each.name))) {
      expect(route.rules, route.name).toHaveLength(1);
      expect(route.rule, route.name).toMatchObject({
        capabilities: ["bot.job.dispatch"],
        onlyServices: ["run"],
        neverToApps: true,
        neverToMods: true,
        actingSubject: false,
      });
      expect(bindingOf(route).visibility).toBe("internal");
    }
  });

  it("manage and read: a service for any robot (acting for a person or nobody), a person's own token by its role", () => {
    const roles: Record<string, string[]> = {
      revokeDevice: ["owner"],
      rotateDevice: ["owner"],
      updateRobot: ["owner"],
      deleteRobot: ["owner"],
      issuePairingCode: ["owner"],
      clearEstop: ["owner"],
      getRobot: ["owner", "operator", "viewer"],
      listRobotAudit: ["owner", "operator", "viewer"],
      listRobotDevices: ["owner", "operator", "viewer"],
      latchEstop: ["owner", "operator"],
    };
    for (const route of routesOf(BotService).filter((each) => each.name in roles)) {
      const [service, person] = route.rules;
      expect(route.rules, route.name).toHaveLength(2);
      expect(service, route.name).toMatchObject({ name: "service", actingSubject: true, noPeople: true });
      expect(person, route.name).toMatchObject({ name: "person", actor: Actor.PERSON, noPeople: false });
      expect(person.relation, route.name).toMatchObject({
        name: route.name.endsWith("Device") ? "device_robot" : "robot",
        scopeField: "id",
        roles: roles[route.name],
      });
    }
    const estop = routesOf(BotService).find((route) => route.name === "latchEstop")!;
    for (const rule of estop.rules) expect(rule.allCapabilities).toEqual(["bot.robot.control", "bot.robot.read"]);
  });
});

describeRefusals(t, http, calls);
describeMalformedInput(t, http, calls);

describe("the device link and /control refuse over RPC as over the WebSocket", () => {
  /** The problem a bidi call ends with before its first frame. */
  async function refusal(stream: AsyncIterable<unknown>) {
    const frames = stream[Symbol.asyncIterator]();
    try {
      await frames.next();
      await frames.return?.();
      return undefined;
    } catch (error) {
      const { status, code } = problemOf(ConnectError.from(error));
      return { status, code };
    }
  }
  const none = (async function* () {})();

  it("the link without a credential, or with one that is not a device's: 401 bot.device.credential_invalid", async () => {
    const link = t.client(BotLinkService);
    expect(await refusal(link.link(none))).toEqual({ status: 401, code: "bot.device.credential_invalid" });
    const forged = { headers: { "x-pf-device-credential": "pfdc_forged" } };
    expect(await refusal(link.link(none, forged))).toEqual({ status: 401, code: "bot.device.credential_invalid" });
  });

  it("the link's credential header is the route's own; other X-PF-* headers from a device are refused (403)", async () => {
    const headers = { "x-pf-device-credential": "pfdc_forged", "x-pf-subject": "usr_a1" };
    expect(await refusal(t.client(BotLinkService).link(none, { headers }))).toEqual({
      status: 403,
      code: "auth.header_refused",
    });
  });

  it("/control: a token with the control capability naming a person; a service acting for nobody is 403", async () => {
    const control = (token?: string, headers: Record<string, string> = {}) =>
      refusal(t.client(BotLinkService, token).control(none, { headers }));
    expect(await control()).toEqual({ status: 401, code: "auth.required" });
    const manager = await managerToken(t);
    expect(await control(manager)).toEqual({ status: 403, code: "auth.person_required" });
    const without = await t.token({ kind: "service", svc: "web", caps: ["bot.robot.read"] });
    expect(await control(without, { "x-pf-subject": "usr_a1" })).toEqual({
      status: 403,
      code: "auth.capability_missing",
    });
    const app = await t.token({ kind: "app", app_id: "app1", caps: ["bot.robot.control"], fp: true });
    expect(await control(app)).toEqual({ status: 403, code: "auth.person_required" });
    expect(await control(manager, { "x-pf-subject": "usr_a1" })).toBeUndefined();
    expect(await control(await t.token({ kind: "user", sub: "usr_a1" }))).toBeUndefined();
  });

  it("answers a forged token 401 auth.invalid on both", async () => {
    const token = forged(await managerToken(t));
    expect(await refusal(t.client(BotLinkService, token).control(none))).toEqual({
      status: 401,
      code: "auth.invalid",
    });
  });
});

describe("robots as the matrix found them", () => {
  it("the device was revoked by the matrix's owner (usr_a1) and the doomed robot deleted", async () => {
    const as = botCall(t, await managerToken(t));
    expect((await as("GET", `/robots/${fixture.doomed}`)).status).toBe(404);
    const devices = (await as("GET", `/robots/${fixture.robot}/devices`)).body.devices.devices;
    expect(devices).toMatchObject([{ id: fixture.device, status: "DEVICE_STATUS_REVOKED" }]);
  });
});
