// The Worker's built files (hooks client, viewer code) live in Workers Static Assets, not in the bundle.
// scripts/build.mjs writes them with a manifest naming their versions; routes read both through the ASSETS
// binding so they can add their own headers (CSP, version, caching) to what they serve.
import * as z from 'zod';

const ManifestSchema = z.object({
  client: z.object({ version: z.string(), sha256: z.string() }),
  viewer: z.object({ version: z.string() }),
});
export type AssetManifest = z.infer<typeof ManifestSchema>;

/** Asset paths are resolved against any origin; this one only names the request. */
const ORIGIN = 'https://assets.invalid';

export function fetchAsset(assets: Fetcher, path: string): Promise<Response> {
  return assets.fetch(new Request(`${ORIGIN}${path}`));
}

// One read per isolate: the manifest changes only with a deploy, which starts new isolates.
let manifest: Promise<AssetManifest> | undefined;

export function assetManifest(assets: Fetcher): Promise<AssetManifest> {
  manifest ??= fetchAsset(assets, '/manifest.json')
    .then(async (res) => {
      if (!res.ok) throw new Error(`asset manifest missing (${res.status}): run npm run build`);
      return ManifestSchema.parse(await res.json());
    })
    .catch((err: unknown) => {
      manifest = undefined;
      throw err;
    });
  return manifest;
}
