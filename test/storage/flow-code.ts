/** The business code a flow's promise settles with: 0 when it resolves; a rejection without a code is rethrown. */
export const codeOf = (promise: Promise<unknown>): Promise<number> =>
  promise.then(
    () => 0,
    (error: { code?: number }) => {
      if (typeof error?.code !== "number") throw error;
      return error.code;
    },
  );
