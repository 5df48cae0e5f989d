/** Path of Debian's Chromium (or $CHROMIUM_PATH); throws with the install command when missing. */
export function chromiumPath(): string;
/** Flags Chromium needs here: root without a sandbox, and no background networking. */
export const chromiumArgs: string[];
