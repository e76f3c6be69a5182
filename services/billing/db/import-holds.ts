import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { ImportHoldSchema, ImportHoldStatus, type ImportHold } from "../../../gen/pf/billing/v1/admin_pb.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { holdMovements, releaseMovements, type ImportedBalance } from "../domain/import-holds.js";
import { accountKindToProto } from "../domain/ledger.js";
import { money } from "../domain/money.js";
import { billingReference } from "../domain/references.js";
import { postAdjustment } from "./adjustments.js";
import { ImportHoldRow } from "./entities.js";

/** Who does it, why and when. */
interface Act {
  reason: string;
  by: string;
  at: Date;
}

/** Records an imported balance, held on the subject's import hold account until a ledger admin releases it. */
export async function holdImported(
  em: EntityManager,
  hold: ImportedBalance & { sourceRef: string },
  act: Act,
): Promise<ImportHoldRow> {
  const id = newId("ih");
  const transaction = await postAdjustment(em, {
    kind: "import_hold",
    movements: holdMovements(hold),
    reason: act.reason,
    reference: billingReference("import_hold", id),
    createdBy: act.by,
    at: act.at,
  });
  return em.create(ImportHoldRow, {
    id,
    ...hold,
    reason: act.reason,
    status: "held",
    holdTransactionId: transaction.id,
    releaseTransactionId: null,
    createdAt: act.at,
    releasedAt: null,
    releasedBy: "",
  });
}

/** Up to `rows` import holds (of one status, when given), newest first, before the cursor's id (ids sort by creation). */
export function importHoldsPage(
  em: EntityManager,
  status: string | undefined,
  before: string | undefined,
  rows: number,
): Promise<ImportHoldRow[]> {
  return em.find(
    ImportHoldRow,
    {
      ...(status ? { status } : {}),
      ...(before !== undefined ? { id: { $lt: before } } : {}),
    },
    { orderBy: { id: "desc" }, limit: rows },
  );
}

/**
 * Releases a held import into the balance it was imported for. The row is
 * locked first, so of two concurrent releases the second finds it released.
 */
export async function releaseImportHold(em: EntityManager, id: string, act: Act): Promise<ImportHoldRow> {
  const row = await em.findOne(ImportHoldRow, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!row) throw problem(404, "import_hold.not_found", `There is no import hold ${id}.`);
  if (row.status === "released") {
    throw problem(409, "import_hold.released", `Import hold ${id} was already released.`, {
      released_at: row.releasedAt?.toISOString() ?? "",
      released_by: row.releasedBy,
    });
  }
  const transaction = await postAdjustment(em, {
    kind: "import_release",
    // The table's check keeps release_to to credit or payable.
    movements: releaseMovements({ ...row, releaseTo: row.releaseTo as ImportedBalance["releaseTo"] }),
    reason: act.reason,
    reference: billingReference("import_hold", id),
    createdBy: act.by,
    at: act.at,
  });
  Object.assign(row, {
    status: "released",
    releaseTransactionId: transaction.id,
    releasedAt: act.at,
    releasedBy: act.by,
  });
  return row;
}

const STATUS: Record<string, ImportHoldStatus> = { held: ImportHoldStatus.HELD, released: ImportHoldStatus.RELEASED };

export function importHoldToProto(row: ImportHoldRow): ImportHold {
  return create(ImportHoldSchema, {
    id: row.id,
    subject: row.subject,
    releaseTo: accountKindToProto(row.releaseTo),
    amount: money(row.amount, row.currency),
    sourceRef: row.sourceRef,
    reason: row.reason,
    status: STATUS[row.status],
    createdAt: timestampFromDate(row.createdAt),
    releasedAt: row.releasedAt ? timestampFromDate(row.releasedAt) : undefined,
    releasedBy: row.releasedBy,
  });
}
