import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globals: true,
    include: ['test/**/*.test.mjs'],
    testTimeout: 60000,
    hookTimeout: 60000,
    fileParallelism: false,
  },
});
