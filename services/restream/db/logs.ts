import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { LogLineSchema, type LogLine } from "../../../gen/pf/restream/v1/destinations_pb.js";
import { sql } from "../../kit/db/sql.js";

interface LogRow {
  output_id: string;
  at: Date;
  text: string;
}

/**
 * Stores an output's lines (already redacted and cut) and, in the same transaction, drops all but its last `keep`.
 * Callers lock the output row first, so two appends to one output trim in turn.
 */
export async function appendLogLines(
  em: EntityManager,
  output: { id: string; destinationId: string },
  lines: readonly string[],
  at: Date,
  keep: number,
): Promise<void> {
  if (lines.length === 0) return;
  await sql(
    em,
    `insert into {output_logs} (output_id, destination_id, at, text)
     select ?, ?, ?, text from jsonb_array_elements_text(?::jsonb) with ordinality as line(text, n) order by n`,
    [output.id, output.destinationId, at, JSON.stringify(lines)],
  );
  await sql(
    em,
    `delete from {output_logs}
      where output_id = ?
        and seq <= (select seq from {output_logs} where output_id = ? order by seq desc offset ? limit 1)`,
    [output.id, output.id, keep],
  );
}

/** An output's last `limit` lines, oldest first. */
export async function logsOfOutput(em: EntityManager, outputId: string, limit: number): Promise<LogLine[]> {
  const rows = await sql<LogRow>(
    em,
    `select output_id, at, text from
       (select seq, output_id, at, text from {output_logs} where output_id = ? order by seq desc limit ?) last
     order by seq`,
    [outputId, limit],
  );
  return rows.map(logLineOf);
}

/** The last `limit` lines of all a destination's outputs, oldest first. */
export async function logsOfDestination(em: EntityManager, destinationId: string, limit: number): Promise<LogLine[]> {
  const rows = await sql<LogRow>(
    em,
    `select output_id, at, text from
       (select seq, output_id, at, text from {output_logs} where destination_id = ? order by seq desc limit ?) last
     order by seq`,
    [destinationId, limit],
  );
  return rows.map(logLineOf);
}

function logLineOf(row: LogRow): LogLine {
  return create(LogLineSchema, { at: timestampFromDate(new Date(row.at)), outputId: row.output_id, text: row.text });
}
