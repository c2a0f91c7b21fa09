npx rankd init myshop
