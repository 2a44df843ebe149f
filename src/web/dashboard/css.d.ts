/** Stylesheets the dashboard bundles as text (esbuild's `text` loader) and injects itself. */
declare module "*.css" {
  const text: string;
  export default text;
}
