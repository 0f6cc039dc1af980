import type { Pool, PoolClient } from "pg";

/**
 * Runs `work` on a client checked out of `pool`. While a client is checked out nothing else
 * listens to its 'error' event, which pg emits when the server ends the connection (a restart,
 * a terminated backend), even during a statement that also fails: unheard, that event would end
 * the process. A client that failed so leaves the pool instead of going back into it.
 */
export async function withPoolClient<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (error: Error) => {
    lost = error;
  };
  client.on("error", onError);
  try {
    return await work(client);
  } finally {
    client.removeListener("error", onError);
    client.release(lost);
  }
}
