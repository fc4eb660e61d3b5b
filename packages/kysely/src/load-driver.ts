/**
 * The driver package `name` as `load` imports it; one that is not installed throws an Error
 * naming the package and the command that installs it, the import's error kept as `cause`.
 */
export async function loadDriver<T>(load: () => Promise<T>, name: string, neededBy: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") throw error;
    throw new Error(
      `@portcullis/kysely: ${neededBy} needs the ${name} package, which is not installed; install it beside @portcullis/kysely: npm i ${name}`,
      { cause: error },
    );
  }
}
