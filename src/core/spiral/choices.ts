/** The answers a user can give to a spiral pause, shared by the service that applies them and the routes that accept them. */
export type SpiralChoice = "unpause" | "rollback_unpause" | "note";
export const SPIRAL_CHOICES: readonly SpiralChoice[] = ["unpause", "rollback_unpause", "note"];
/** The longest note an answer may carry (characters). */
export const SPIRAL_NOTE_MAX = 2_000;
