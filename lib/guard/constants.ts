/** The mass-deletion guard's settings (docs/removal-guard.md). */

/** The variable every runtime reads: a percentage from 0 to 100, or `off`. */
export const MAX_REMOVAL_VARIABLE = "CONNECTOR_MAX_REMOVAL_PERCENT";

/** The CLI's flag for the same setting; it wins over the variable. */
export const MAX_REMOVAL_FLAG = "--max-removal-percent";

/**
 * A new snapshot that removes more than this share of the previous one's users, or of its
 * grants, is held (issue 9, item 4).
 */
export const DEFAULT_MAX_REMOVAL_PERCENT = 30;

/** The value that switches the guard off: every complete snapshot is published. */
export const GUARD_OFF = "off";
