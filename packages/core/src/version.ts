/** The version of `@portcullis/core`, as in its package.json (a test keeps the two equal). */
export const coreVersion = "0.1.0";
