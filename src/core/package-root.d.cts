/** The folder of this package (the one holding its package.json, fixtures/ and dist/). */
export declare function packageRoot(): string;
/** The top of the code tree the calling module is part of: src/, dist/ or dist/cjs/. */
export declare function codeRoot(): string;
