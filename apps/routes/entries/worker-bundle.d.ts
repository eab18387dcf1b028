/** The JSON file `routes bundle` wrote, aliased as "routes-bundle" by wrangler.toml's [env.routes]. */
declare module "routes-bundle" {
  const bundle: import("../script/read-bundle.ts").WorkerBundle;
  export default bundle;
}
