import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "out/**", "node_modules/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      eqeqeq: ["error", "smart"],
      curly: "error",
      "no-restricted-imports": [
        "error",
        { paths: [{ name: "vscode", message: "Only src/extension.ts, src/serverController.ts and the src/vscode*.ts wrappers talk to vscode." }] },
      ],
    },
  },
  {
    files: ["src/extension.ts", "src/serverController.ts", "src/vscode*.ts"],
    rules: { "no-restricted-imports": "off" },
  },
  {
    files: ["**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } },
  },
);
