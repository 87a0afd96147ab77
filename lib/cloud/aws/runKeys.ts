/** How long a run's items stay in the runs table (its `expiresAt`, DynamoDB's time to live). */
const RETENTION_SECONDS = 14 * 24 * 3600;

/** A run's item: its status and counts. */
export const runKey = (syncId: string) => ({ pk: `run#${syncId}`, sk: "run" });
/** A job's marker in its run: pending or done, its owner, its shard. */
export const markerKey = (syncId: string, jobId: string) => ({
  pk: `run#${syncId}`,
  sk: `job#${jobId}`,
});
export const expiresAt = () => Math.floor(Date.now() / 1000) + RETENTION_SECONDS;
