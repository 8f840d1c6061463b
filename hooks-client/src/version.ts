// The client's version and build id, stamped in by hooks-client/build.mjs (esbuild define).
declare const __CAIRN_VERSION__: string | undefined;

export const VERSION: string = typeof __CAIRN_VERSION__ === 'string' ? __CAIRN_VERSION__ : '0.0.0-dev';

/** True in the built single-file client (where process.argv[1] is the client itself), false under tests. */
export const BUNDLED: boolean = typeof __CAIRN_VERSION__ === 'string';
