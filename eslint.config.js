// ESLint: rules that catch real bugs, above all in async code. Layout is Prettier's job, so nothing here is a
// style rule; what `tsc --noEmit` already checks (unused locals, undefined names, duplicate keys) is left to it.
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import tseslint from "typescript-eslint";

export default defineConfig(
  {
    ignores: ["gen/", "dist/", "node_modules/", ".data/", "coverage/", "clients/ts/dist/", "clients/ts/src/generated/"],
  },
  {
    files: ["**/*.ts", "**/*.js", "**/*.mjs"],
    extends: [js.configs.recommended, tseslint.configs.eslintRecommended],
    linterOptions: { reportUnusedDisableDirectives: "error" },
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {
        // One TypeScript program per tsconfig, shared by every file (fast on two cores); loose .js files such as
        // this one, and the plain-node scripts of deploy/ (npm start's prestart), get a default program.
        projectService: { allowDefaultProject: ["*.js", "deploy/*.mjs"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    rules: {
      // Promises: every one is awaited, returned or explicitly `void`ed; none is passed where a callback's result
      // is ignored (an async listener's rejection would go unhandled); `await` only on what can be awaited.
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/await-thenable": "error",
      // `return promise` inside try/catch/finally skips the catch and runs the finally too early.
      "@typescript-eslint/return-await": ["error", "error-handling-correctness-only"],
      // Only errors are thrown or rejected (a caught `unknown` may be passed on as it is).
      "@typescript-eslint/prefer-promise-reject-errors": ["error", { allowThrowingUnknown: true }],
      "@typescript-eslint/only-throw-error": "error",
      // An async function without `await` is fine (an interface asks for a promise).
      "require-await": "off",
      "@typescript-eslint/require-await": "off",
      // Values that print as "[object Object]" or "undefined" in text someone reads.
      "@typescript-eslint/no-base-to-string": "error",
      "@typescript-eslint/restrict-template-expressions": [
        "error",
        { allowNumber: true, allowBoolean: true, allowNullish: false, allowRegExp: true },
      ],
      // Spreading a promise, a string or a Map into an object or array loses what it holds.
      "@typescript-eslint/no-misused-spread": "error",
      "@typescript-eslint/no-for-in-array": "error",
      "@typescript-eslint/no-array-delete": "error",
      "@typescript-eslint/no-implied-eval": "error",
      // Core rules beyond the recommended set that catch mistakes, not style.
      eqeqeq: ["error", "smart"],
      "no-self-compare": "error",
      "no-template-curly-in-string": "error",
      "no-unreachable-loop": "error",
      "no-constructor-return": "error",
      // Checked by tsc (noUnusedLocals), and the core rule misreads TypeScript.
      "no-unused-vars": "off",
    },
  },
);
