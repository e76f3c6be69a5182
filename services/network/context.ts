import type { ServiceContext } from "../kit/service/module.js";
import { Sealer } from "../kit/runtime/sealer.js";
import { StaffList } from "./db/staff-list.js";

/**
 * Built once per network instance by the host: the service context, the sealer
 * of stored secrets and the staff list kept in memory.
 */
export interface NetworkContext extends ServiceContext {
  sealer: Sealer;
  staffList: StaffList;
}

export async function networkContext(base: ServiceContext): Promise<NetworkContext> {
  return { ...base, sealer: await Sealer.load(base.config), staffList: new StaffList(base) };
}
