import pg from "pg";

/**
 * Holds one coin account's row from another session, so a call that needs it
 * waits inside its transaction until `release()`.
 */
export async function holdCoinAccount(
  databaseUrl: string,
  appId: string,
  subject: string,
): Promise<{ release(): Promise<void> }> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  await holder.query("begin");
  await holder.query("select 1 from network.coin_accounts where app_id = $1 and subject = $2 for update", [
    appId,
    subject,
  ]);
  return {
    async release() {
      await holder.query("commit");
      await holder.end();
    },
  };
}
